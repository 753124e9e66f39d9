/**
 * The repository stands alone (issue 15, item 7): a reader who has only this repository must be able to follow
 * every reference in it. Documents that live outside it (a `../shared` folder, the operator interface, the
 * architecture guide, the API description's own file, a `decisions.md` beside it) must not be cited; our
 * decisions are docs/decisions.md, cited as `docs/decisions.md, "Money"` or `docs/decisions.md, "Rating" 6`.
 * Also checked: every such citation names a section (and rating rule) that docs/decisions.md has, and every
 * relative link in README.md and docs/*.md points at a file that exists. No database.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, sep } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, it } from "node:test";

const ROOT = join(dirname(fileURLToPath(import.meta.url)), "../..");
const SCANNED = ["README.md", "docs", "src", "test", "bench", "scripts", "migrations", ".ci"];
const TEXT_FILE = /\.(md|ts|mts|mjs|js|cjs|sql|json|sh)$|^[^.]+$/;
const THIS_FILE = relative(ROOT, fileURLToPath(import.meta.url))
  .split(sep)
  .join("/");
// Verbatim copies of the migrations as earlier versions shipped them (test/database/migration-functions.test.ts
// migrates from them): history, kept byte for byte, not text anyone reads for a rule.
const FROZEN = "test/fixtures/migrations-v1";

interface TextFile {
  path: string; // relative to the repository, with `/`
  lines: string[];
}

function collect(path: string, into: TextFile[]): void {
  const absolute = join(ROOT, path);
  if (!existsSync(absolute)) return;
  if (statSync(absolute).isDirectory()) {
    for (const name of readdirSync(absolute).sort()) {
      if (name === "node_modules" || `${path}/${name}` === FROZEN) continue;
      collect(`${path}/${name}`, into);
    }
  } else if (path !== THIS_FILE && TEXT_FILE.test(path.slice(path.lastIndexOf("/") + 1))) {
    into.push({ path, lines: readFileSync(absolute, "utf8").split("\n") });
  }
}

const files: TextFile[] = [];
for (const path of SCANNED) collect(path, files);

/** Names of documents outside the repository. Case matters: docs/architecture.md is ours. */
const OUTSIDE = [/\.\.\/shared/, /INTERFACE\.md/, /ARCHITECTURE\.md/, /billing-service-spec/];

/** A `decisions.md` that is not docs/decisions.md; inside docs/, a Markdown link to `decisions.md` is ours. */
function hasBareDecisions(file: TextFile, line: string): boolean {
  let rest = line.replaceAll("docs/decisions.md", "");
  if (/^docs\/[^/]+\.md$/.test(file.path))
    rest = rest.replace(/\]\(decisions\.md(?=[)#])/g, "]").replaceAll("[decisions.md]", "");
  return rest.includes("decisions.md");
}

function where(file: TextFile, index: number): string {
  return `${file.path}:${index + 1}: ${file.lines[index]!.trim()}`;
}

describe("the repository stands alone", () => {
  it("scans the places that hold references", () => {
    assert.ok(files.some((f) => f.path === "README.md"));
    assert.ok(files.some((f) => f.path === "docs/decisions.md"));
    assert.ok(files.filter((f) => f.path.startsWith("src/")).length > 50, "src/ was not scanned");
  });

  it("cites no document outside the repository", () => {
    const found: string[] = [];
    for (const file of files) {
      file.lines.forEach((line, i) => {
        if (OUTSIDE.some((re) => re.test(line)) || hasBareDecisions(file, line)) found.push(where(file, i));
      });
    }
    assert.ok(found.length === 0, `references to documents that are not in this repository:\n${found.join("\n")}\n`);
  });

  it("cites only sections and rating rules that docs/decisions.md has", () => {
    const decisions = readFileSync(join(ROOT, "docs/decisions.md"), "utf8");
    const sections = new Set([...decisions.matchAll(/^## (.+)$/gm)].map((m) => m[1]!.trim()));
    const rules = new Set([...decisions.matchAll(/^(\d+)\. /gm)].map((m) => Number(m[1])));
    assert.ok(sections.has("Rating an event") && rules.has(1), "docs/decisions.md lost its numbered rating rules");
    const found: string[] = [];
    for (const file of files) {
      file.lines.forEach((line, i) => {
        // `docs/decisions.md, "Money"`, `[decisions.md](decisions.md), "Rating" 6`, `"Rating" 1 to 3`.
        for (const m of line.matchAll(/decisions\.md\)?, "([^"]+)"((?: (?:\d+|to|and))*)/g)) {
          const [name, numbers] = [m[1]!, m[2]!];
          if (name === "Rating") {
            const cited = [...numbers.matchAll(/\d+/g)].map((n) => Number(n[0]));
            if (cited.length === 0 || cited.some((n) => !rules.has(n)))
              found.push(`${where(file, i)} (no such rating rule)`);
          } else if (!sections.has(name)) {
            found.push(`${where(file, i)} (no section "${name}")`);
          }
        }
      });
    }
    assert.ok(found.length === 0, `citations docs/decisions.md cannot answer:\n${found.join("\n")}\n`);
  });

  it("links from README.md and docs/ only to files that exist", () => {
    const found: string[] = [];
    for (const file of files.filter(
      (f) => f.path.endsWith(".md") && (f.path === "README.md" || f.path.startsWith("docs/")),
    )) {
      file.lines.forEach((line, i) => {
        for (const m of line.matchAll(/\]\(([^)\s]+)\)/g)) {
          const target = m[1]!.split("#")[0]!;
          if (target === "" || /^[a-z][a-z0-9+.-]*:/i.test(target)) continue; // an anchor or a URL
          if (!existsSync(join(ROOT, dirname(file.path), target))) found.push(`${where(file, i)} (${target})`);
        }
      });
    }
    assert.ok(found.length === 0, `links to files that do not exist:\n${found.join("\n")}\n`);
  });
});
