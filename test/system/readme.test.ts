/**
 * README.md, "Your first ten minutes", run verbatim: the test reads the README when it runs and executes the
 * ```sh blocks of that section and its subsections (up to "### Webhooks") as a reader would paste them, so a
 * change to the README is a change to what runs here. The block with `npm start` starts the service (in bash,
 * in its own process group, from the repository), the others run in order in ONE `bash -eo pipefail` (so KEY,
 * BASE, CUSTOMER, NOW carry from block to block) in a temporary folder (the upload block writes
 * signed-agreement.pdf there). The environment differs from a reader's only in variables the README's commands
 * read anyway: a free PORT (the README's BASE follows it), a fresh BILLING_DATA_DIR and LOG_LEVEL=warn. The
 * answers are checked against what the README's comments tell the reader to expect.
 *
 * The README must also work on macOS: its shell blocks use no GNU-only flags.
 *
 * Needs bash and curl: skipped when one is missing, failed instead when CI=1.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, it } from "node:test";
import { waitFor } from "../support/assertions.js";
import { freePort } from "../support/chromium.js";
import { REPO_ROOT } from "../support/service-process.js";

const README = readFileSync(join(REPO_ROOT, "README.md"), "utf8").replace(/\r\n/g, "\n");

/** The ```sh blocks of a Markdown text, in order, without their fences. */
function shBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```[ \t]*$/gm)].map((m) => m[1]!);
}

/** "## Your first ten minutes" and its subsections, up to "### Webhooks". */
function firstTenMinutes(markdown: string): string {
  const start = markdown.search(/^## Your first ten minutes[ \t]*$/m);
  assert.ok(start >= 0, 'README.md has no "## Your first ten minutes" section');
  const end = markdown.slice(start).search(/^### Webhooks[ \t]*$/m);
  assert.ok(end > 0, 'README.md has no "### Webhooks" after "## Your first ten minutes"');
  return markdown.slice(start, start + end);
}

const blocks = shBlocks(firstTenMinutes(README));
const startBlocks = blocks.filter((b) => /\bnpm start\b/.test(b));
const startBlock = startBlocks[0] ?? "";
const clientBlocks = blocks.slice(blocks.indexOf(startBlock) + 1);

/**
 * GNU-only spellings that fail (or mean something else) with macOS's BSD tools. Each pattern looks for the
 * command at a command position (line start, after `$(`, `|`, `;`, `&&`) followed by the flag on the same line.
 */
const CMD = String.raw`(?:^|[\s;|&(\x60])`;
const GNU_ONLY: { what: string; re: RegExp }[] = [
  {
    what: "date -d / --date (BSD date uses -v or -j -f)",
    re: new RegExp(String.raw`${CMD}date\b[^\n;|&)]*\s(?:-[a-zA-Z]*d\b|--date\b)`, "m"),
  },
  {
    what: "sed -i without a suffix (BSD sed needs one: -i.bak)",
    re: new RegExp(String.raw`${CMD}sed\b[^\n;|&)]*\s-[a-zA-Z]*i(?=\s|$)`, "m"),
  },
  { what: "sed -r (use -E)", re: new RegExp(String.raw`${CMD}sed\b[^\n;|&)]*\s-[a-zA-Z]*r\b`, "m") },
  {
    what: "grep -P (no Perl regexes in BSD grep)",
    re: new RegExp(String.raw`${CMD}grep\b[^\n;|&)]*\s(?:-[a-zA-Z]*P|--perl-regexp)\b`, "m"),
  },
  { what: "readlink -f", re: new RegExp(String.raw`${CMD}readlink\s+(?:-[a-zA-Z]*f|--canonicalize)`, "m") },
  {
    what: "xargs -r / --no-run-if-empty",
    re: new RegExp(String.raw`${CMD}xargs\b[^\n;|&)]*\s(?:-[a-zA-Z]*r\b|--no-run-if-empty\b)`, "m"),
  },
  { what: "base64 -w / --wrap", re: new RegExp(String.raw`${CMD}base64\b[^\n;|&)]*\s(?:-[a-zA-Z]*w|--wrap)`, "m") },
  {
    what: "stat -c / --format (BSD stat uses -f)",
    re: new RegExp(String.raw`${CMD}stat\s+(?:-[a-zA-Z]*c|--format|--printf)`, "m"),
  },
  { what: "find -printf", re: new RegExp(String.raw`${CMD}find\b[^\n;|&)]*\s-printf\b`, "m") },
  {
    what: "sort -V / --version-sort",
    re: new RegExp(String.raw`${CMD}sort\b[^\n;|&)]*\s(?:-[a-zA-Z]*V|--version-sort)\b`, "m"),
  },
];

/** Drops a `# comment` at the start of a line: comments are prose for the reader. */
function withoutComments(block: string): string {
  return block
    .split("\n")
    .filter((line) => !/^\s*#/.test(line))
    .join("\n");
}

/**
 * The test runner's environment without what would change the service's meaning (BILLING_*, DATABASE_URL,
 * HOST, PORT, the runner's own context): a reader's terminal, then only `extra`.
 */
function readerEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (
      /^(BILLING_|DATABASE_|npm_)/.test(name) ||
      ["HOST", "PORT", "LOG_LEVEL", "NODE_TEST_CONTEXT", "KEY", "BASE"].includes(name)
    )
      continue;
    env[name] = value;
  }
  return { ...env, ...extra };
}

function has(command: string): boolean {
  return spawnSync(command, ["--version"], { stdio: "ignore" }).status === 0;
}

const missing = ["bash", "curl"].filter((c) => !has(c));
const skip =
  missing.length > 0 && process.env.CI !== "1"
    ? `${missing.join(" and ")} not installed (set CI=1 to fail instead)`
    : false;

/** Whether any process of the group led by `pid` is still alive. */
function groupAlive(pid: number): boolean {
  try {
    process.kill(-pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM to the whole group (bash, npm, sh, node), SIGKILL after `graceMs`; resolves once none is left. */
async function killGroup(child: ChildProcess, graceMs = 10_000): Promise<void> {
  const pid = child.pid;
  if (pid === undefined || !groupAlive(pid)) return;
  process.kill(-pid, "SIGTERM");
  try {
    await waitFor(`process group ${pid} to exit after SIGTERM`, () => !groupAlive(pid), graceMs);
  } catch {
    if (groupAlive(pid)) process.kill(-pid, "SIGKILL");
    await waitFor(`process group ${pid} to exit after SIGKILL`, () => !groupAlive(pid), 5_000);
  }
}

/**
 * Splits the client blocks' stdout (curl -s prints each answer without a newline) into the JSON answers.
 * Text outside any JSON value is returned too, so a non-JSON answer is seen.
 */
function splitAnswers(stdout: string): { answers: Record<string, any>[]; stray: string } {
  const answers: Record<string, any>[] = [];
  let stray = "";
  let depth = 0;
  let begin = -1;
  let inString = false;
  let escaped = false;
  for (let i = 0; i < stdout.length; i++) {
    const c = stdout[i]!;
    if (depth === 0 && c !== "{" && c !== "[") {
      stray += c;
      continue;
    }
    if (inString) {
      if (escaped) escaped = false;
      else if (c === "\\") escaped = true;
      else if (c === '"') inString = false;
    } else if (c === '"') inString = true;
    else if (c === "{" || c === "[") {
      if (depth === 0) begin = i;
      depth++;
    } else if (c === "}" || c === "]") {
      depth--;
      if (depth === 0) answers.push(JSON.parse(stdout.slice(begin, i + 1)) as Record<string, any>);
    }
  }
  assert.equal(depth, 0, `an answer was cut short: ${stdout.slice(begin)}`);
  return { answers, stray: stray.trim() };
}

describe('README.md, "Your first ten minutes", run verbatim', { skip }, () => {
  it("has bash and curl to run the blocks with", () => {
    assert.deepEqual(
      missing,
      [],
      `README.md's blocks need ${missing.join(" and ")}, not installed here (CI=1: failing instead of skipping)`,
    );
  });

  it("finds the start block and the client blocks", () => {
    assert.equal(startBlocks.length, 1, `one block starts the service with npm start:\n${blocks.join("\n---\n")}`);
    assert.match(startBlock, /BILLING_BOOTSTRAP_API_KEY=/, "the start block bootstraps a company and its key");
    assert.equal(blocks.indexOf(startBlock), 0, "the start block comes first");
    assert.ok(
      clientBlocks.length >= 3,
      `the second terminal, the billing walk-through and the upload: ${clientBlocks.length} blocks`,
    );
    assert.match(clientBlocks.join("\n"), /contracts\/upload/, "the upload block is among them");
  });

  it("uses no GNU-only flags in any shell block (the README works on macOS too)", () => {
    const found: string[] = [];
    for (const block of shBlocks(README)) {
      for (const { what, re } of GNU_ONLY) {
        const m = re.exec(withoutComments(block));
        if (m) found.push(`${what}: ${m[0].trim()}`);
      }
    }
    assert.deepEqual(found, [], `GNU-only flags in README.md's shell blocks:\n${found.join("\n")}`);
    // Sanity of the patterns themselves: each one catches its GNU spelling.
    for (const sample of [
      `END=$(date -u -d "$S +1 month" +%F)`,
      "sed -i 's/a/b/' f",
      "grep -oP '\\d+' f",
      "readlink -f x",
      "ls | xargs -r rm",
      "base64 -w0 f",
    ]) {
      assert.ok(
        GNU_ONLY.some(({ re }) => re.test(sample)),
        `the patterns catch ${sample}`,
      );
    }
    for (const portable of [
      "NOW=$(date -u +%Y-%m-%dT%H:%M:%SZ)",
      "sed -i.bak 's/a/b/' f",
      "grep -E 'a|b' f",
      `-d '{"start_date":"2026-01-01"}'`,
    ]) {
      assert.ok(!GNU_ONLY.some(({ re }) => re.test(portable)), `the patterns let ${portable} through`);
    }
  });

  it("the client blocks follow PORT instead of hard-coding the service's address", () => {
    const hardCoded = withoutComments(clientBlocks.join("\n")).match(/(?:127\.0\.0\.1|localhost|\[::1\]):\d+/g);
    assert.equal(
      hardCoded,
      null,
      "BASE must read PORT (e.g. http://127.0.0.1:${PORT:-8080}), or the test would talk to whatever listens on 8080",
    );
  });

  it("starts the service with the start block, then every answer of the walk-through is the one the README announces", {
    timeout: 120_000,
  }, async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), "readme-data-"));
    const workDir = mkdtempSync(join(tmpdir(), "readme-work-"));
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    const env = readerEnv({ PORT: String(port), BILLING_DATA_DIR: dataDir, LOG_LEVEL: "warn" });

    // The service, as the README starts it: bash running the block from the repository, in a group of its own.
    const service = spawn("bash", ["-c", startBlock], {
      cwd: REPO_ROOT,
      env,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    const serviceOutput: string[] = [];
    service.stdout!.on("data", (chunk: Buffer) => serviceOutput.push(chunk.toString("utf8")));
    service.stderr!.on("data", (chunk: Buffer) => serviceOutput.push(chunk.toString("utf8")));
    let client: ChildProcess | undefined;
    t.after(async () => {
      if (client) await killGroup(client, 2_000);
      await killGroup(service);
      rmSync(workDir, { recursive: true, force: true });
      rmSync(dataDir, { recursive: true, force: true });
    });

    await waitFor(
      `GET ${base}/readyz to answer 200`,
      async () => {
        if (service.exitCode !== null || service.signalCode !== null) {
          assert.fail(
            `the start block exited (${service.exitCode ?? service.signalCode}) before the service was ready:\n${serviceOutput.join("")}`,
          );
        }
        try {
          return (await fetch(`${base}/readyz`, { signal: AbortSignal.timeout(2_000) })).status === 200;
        } catch {
          return false;
        }
      },
      60_000,
    );

    // The second terminal: every client block in order, in one bash, so the variables carry over.
    const script = clientBlocks.join("\n");
    const run = await new Promise<{
      code: number | null;
      signal: NodeJS.Signals | null;
      stdout: string;
      stderr: string;
    }>((resolve, reject) => {
      client = spawn("bash", ["-eo", "pipefail", "-c", script], {
        cwd: workDir,
        env,
        detached: true,
        stdio: ["ignore", "pipe", "pipe"],
      });
      let stdout = "";
      let stderr = "";
      client.stdout!.on("data", (chunk: Buffer) => (stdout += chunk.toString("utf8")));
      client.stderr!.on("data", (chunk: Buffer) => (stderr += chunk.toString("utf8")));
      client.on("error", reject);
      client.on("close", (code, signal) => resolve({ code, signal, stdout, stderr }));
    });
    const transcript = `stdout:\n${run.stdout}\nstderr:\n${run.stderr}\nservice:\n${serviceOutput.join("")}`;
    assert.equal(run.code, 0, `the client blocks exited ${run.code ?? run.signal}\n${transcript}`);
    assert.ok(!run.stdout.includes('"internal_error"'), `an answer is an internal error\n${transcript}`);

    const { answers, stray } = splitAnswers(run.stdout);
    assert.equal(stray, "", `every answer is JSON\n${transcript}`);
    const find = (what: string, predicate: (a: Record<string, any>) => boolean): Record<string, any> => {
      const found = answers.find((a) => {
        try {
          return predicate(a);
        } catch {
          return false;
        }
      });
      assert.ok(found, `no answer is ${what}\n${transcript}`);
      return found;
    };

    // "create a customer (201), then list customers"
    const customer = find("the customer created", (a) => a.object === "customer" && a.external_id === "globex");
    assert.equal(customer.name, "Globex Corporation");
    find(
      "the list of customers holding Globex",
      (a) => Array.isArray(a.data) && a.data.some((c: any) => c.id === customer.id),
    );

    // "the same external_id again answers 409 with the existing customer"
    const exists = find("the customer_exists error", (a) => a.code === "customer_exists");
    assert.ok(
      JSON.stringify(exists).includes(customer.id),
      `the 409 names the existing customer ${customer.id}: ${JSON.stringify(exists)}`,
    );

    // "a sample contract: id globex-corporation-test, metrics domestic_wire (20) and international_wire (30),
    // a 1000 USD monthly minimum, and an agreement PDF at pdf_url"
    const sample = find("the sample contract", (a) => a.id === "globex-corporation-test" && a.sample === true);
    assert.equal(sample.customer_id, customer.id);
    assert.match(String(sample.pdf_url), new RegExp(`^http://localhost:${port}/`), "pdf_url follows PORT");

    // "three events: two are new, the third repeats an event_id (accepted, duplicate, billed once)"
    const ingest = find("the answer to the three events", (a) => Array.isArray(a.events) && a.events.length === 3);
    assert.deepEqual(
      ingest.events.map((e: any) => [e.event_id, e.status, e.duplicate]),
      [
        ["wire-1", "accepted", false],
        ["wire-2", "accepted", false],
        ["wire-1", "accepted", true],
      ],
      `the third event is accepted as a duplicate: ${JSON.stringify(ingest)}`,
    );

    // "the rated events and the live draft invoice (2 x 20 + 1 x 30 = 70.00)"
    const rated = find(
      "the rated events",
      (a) => Array.isArray(a.data) && a.data.some((e: any) => e.object === "usage_event"),
    );
    assert.deepEqual(
      rated.data.map((e: any) => [e.id, e.rated_amount]).sort(),
      [
        ["wire-1", 40],
        ["wire-2", 30],
      ],
      `the duplicate is billed once: ${JSON.stringify(rated)}`,
    );
    const drafts = find(
      "the draft invoice list",
      (a) => Array.isArray(a.data) && a.data.some((i: any) => i.object === "invoice"),
    );
    assert.equal(drafts.data.length, 1, `one invoice: ${JSON.stringify(drafts)}`);
    const draft = drafts.data[0];
    assert.equal(draft.status, "draft");
    assert.equal(Number(draft.total), 70, `the draft invoice totals 70.00: ${JSON.stringify(draft)}`);
    assert.ok(run.stdout.includes('"total":70.00'), "the reader sees 70.00");

    // "projection tops the month up to the 1000.00 minimum (a "Monthly minimum" line of 930.00)", then the
    // invoice itself (INV-000001) with its lines.
    const projected = find("the projection", (a) => a.object === "invoice" && "is_new" in a);
    assert.equal(projected.number, draft.number, "the projection updates the same draft");
    assert.equal(Number(projected.total), 1000, `the projection totals 1000.00: ${JSON.stringify(projected)}`);
    const withLines = find("the invoice with its lines", (a) => a.object === "invoice" && Array.isArray(a.line_items));
    const minimum = withLines.line_items.filter((l: any) => l.kind === "minimum");
    assert.equal(minimum.length, 1, `one minimum line: ${JSON.stringify(withLines)}`);
    assert.equal(minimum[0].description, "Monthly minimum: $1,000.00 committed, $70.00 counted");
    assert.equal(Number(minimum[0].amount), 930, `the monthly minimum line is 930.00: ${JSON.stringify(withLines)}`);
    assert.equal(Number(withLines.total), 1000);

    // The upload: "The answer is the contract".
    const uploaded = find("the uploaded contract", (a) => a.id === "initech-2026");
    assert.equal(uploaded.sample, false, `an uploaded contract is not a sample: ${JSON.stringify(uploaded)}`);
    assert.ok(run.stdout.includes('"sample":false'));
  });
});
