#!/usr/bin/env node
// Refuses a change to a migration that exists (docs/architecture.md, "Migrations"):
//   node scripts/check-migrations.mjs [repository-dir] [--allow-shallow]      (npm run check:migrations)
// A numbered migration (migrations/NNNN_name.sql, the files src/db/migrate.ts applies once each) must hold, at
// HEAD and in the working tree, the text of the commit that first added it, and every migration ever added
// must still be there under its name. A migration already applied somewhere never runs again: an edit would
// leave that database without the change and new ones with it, and a renamed file would run a second time. At
// start-up migrate.ts compares each applied migration's SHA-256 with the one it recorded and refuses to start;
// this check says so before the change lands, not on a live database.
//
// migrations/functions/*.sql are not checked: migrate.ts runs every one of them again (CREATE OR REPLACE) at
// every start, after the numbered migrations, so a changed function file is how a function is changed.
//
// The repository is the one holding repository-dir (default: the current directory). It needs its whole
// history: in a shallow clone every file looks first added at the shallow boundary, and an old edit would go
// unseen, so a shallow clone fails unless --allow-shallow is given (then the history there is is checked, and
// the pinned files below in full). Without git, or outside a repository, the check fails: it cannot answer.
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { existsSync, readFileSync } from "node:fs";
import { basename, join, resolve } from "node:path";

/** The names migrate.ts applies (loadMigrations); other files in migrations/ are not migrations. */
const MIGRATION = /^\d{4}_[a-z0-9_]+\.sql$/;

/**
 * Migrations changed after the commit that added them, before this check existed. History is not rewritten,
 * so each one's text today is pinned by its SHA-256, the value migrate.ts records in schema_migrations
 * (migrationChecksum: line endings made LF): any further change to them fails like any other.
 */
const PINNED = new Map([
  // Changed by 4610552 (its function moved to migrations/functions/), before applied migrations were checksummed.
  ["migrations/0004_usage_and_invoices.sql", "a593e81d93a6a7851e690aa9be65fb3dcff3b2b8804f8020fe979db2d2d37818"],
  // Changed by 52f71dd, b76bd70 (the fee fix folded in while nothing was deployed), 4610552 and a7edc32, before
  // applied migrations were checksummed.
  ["migrations/0005_ingest_function.sql", "0f28c0647573c66f46f843e5d95f0ed10469b4b45dcf366efc10fe775d55b537"],
  // Changed by 4610552 (functions moved out), before applied migrations were checksummed.
  ["migrations/0009_ingest_line_deltas.sql", "567ebda13dd4327dd307c7ed94d477cc06305be4d0ff7fe782d47d1424eb6256"],
  ["migrations/0010_ingest_planner_costs.sql", "44494b451dcaa155ea6a527ea44615e2622796a5e1ef22d6a3e3095414ae613e"],
  [
    "migrations/0011_ingest_duplicates_that_differ.sql",
    "7c81e8f3583c935a1e2af12ba423f91a81e5b8e4a7449c4506a59bf266faa415",
  ],
  // Changed by 1485023 and a11ba93 (review mends), before applied migrations were checksummed.
  ["migrations/0014_invoice_lifecycle.sql", "c653da5c9f4e0ae679ffc739540773874f3df20d99a69a70a5c8207fa979bf85"],
  ["migrations/0015_contract_documents.sql", "819826ea6ce0eac35499feafb3aacb3a2861e4975407092ed0ce47df1e16bcef"],
  // Changed by 1652b18 (scheduled pricing changes) the day it was added, while it was the newest migration.
  ["migrations/0018_usage_corrections.sql", "d392bdd6ab3831932e7975c8fb724d0db337b3058e5ca9fd13bf7a66a2c362ac"],
  // Changed by 21a174c (the 'void' ledger kind) the day it was added, while it was the newest migration.
  ["migrations/0019_credits.sql", "c5385e9b010a05eaedb082b539aa6910de98c8a3432d91a2260c9ebf77ff4822"],
  // Changed by 4297a44 and e24a7ac the day it was added, while it was the newest migration.
  ["migrations/0020_invoices_to_send.sql", "51c610b217257416fa798c569737bebb1d4f374c7729867ada57d00f8d873a35"],
]);

/** Migrations removed before this check existed: b76bd70 folded 0008's fix into 0005 (nothing was deployed). */
const REMOVED = new Set(["migrations/0008_fee_unit_price_precision.sql"]);

const checksum = (text) => createHash("sha256").update(text.replace(/\r\n/g, "\n")).digest("hex");

function fail(message) {
  console.error(`check-migrations: ${message}`);
  process.exit(1);
}

const args = process.argv.slice(2);
const allowShallow = args.includes("--allow-shallow");
const dirs = args.filter((arg) => arg !== "--allow-shallow");
if (dirs.length > 1 || dirs.some((arg) => arg.startsWith("-")))
  fail(`usage: check-migrations.mjs [repository-dir] [--allow-shallow], not ${args.join(" ")}`);
const start = resolve(dirs[0] ?? process.cwd());

/** Runs git in the repository; its stdout, or undefined when it exits non-zero and `orFail` is not set. */
function git(gitArgs, { cwd = root, orFail = true } = {}) {
  const result = spawnSync("git", gitArgs, { cwd, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
  if (result.error)
    fail(
      result.error.code === "ENOENT"
        ? "git is not installed: the migrations' history cannot be read"
        : `git ${gitArgs[0]}: ${result.error.message}`,
    );
  if (result.status !== 0) {
    if (orFail) fail(`git ${gitArgs.join(" ")} failed: ${result.stderr.trim()}`);
    return undefined;
  }
  return result.stdout;
}

const root = git(["rev-parse", "--show-toplevel"], { cwd: start, orFail: false })?.trim();
if (!root) fail(`${start} is not in a git repository: the migrations' history cannot be read`);

if (git(["rev-parse", "--is-shallow-repository"]).trim() === "true") {
  if (!allowShallow)
    fail(
      "this clone is shallow: a migration's first commit may be missing, so an edit could go unseen. " +
        "Fetch the whole history (git fetch --unshallow), or pass --allow-shallow to check what is there",
    );
  console.warn("check-migrations: warning: shallow clone, only the history it holds is checked (--allow-shallow)");
}

if (git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], { orFail: false }) === undefined) {
  console.log("check-migrations: no commit yet, nothing to check");
  process.exit(0);
}

const isMigration = (path) =>
  path.startsWith("migrations/") && !path.slice(11).includes("/") && MIGRATION.test(basename(path));

const atHead = git(["ls-tree", "--name-only", "HEAD", "migrations/"]).split("\n").filter(isMigration);

/**
 * Every migration's first commit on HEAD's history: the oldest commit that added a file by that name (parents
 * before children, whatever the commit dates say; no rename detection, so a renamed file counts as added).
 */
const firstAdded = new Map();
let commit;
for (const line of git([
  "log",
  "--no-renames",
  "--diff-filter=A",
  "--reverse",
  "--topo-order",
  "--format=commit %H",
  "--name-only",
  "HEAD",
  "--",
  "migrations/",
]).split("\n")) {
  if (line.startsWith("commit ")) commit = line.slice(7);
  else if (isMigration(line) && !firstAdded.has(line)) firstAdded.set(line, commit);
}

const problems = [];
for (const path of atHead) {
  const texts = [["at HEAD", git(["show", `HEAD:${path}`])]];
  const onDisk = join(root, path);
  if (existsSync(onDisk)) {
    const text = readFileSync(onDisk, "utf8");
    if (checksum(text) !== checksum(texts[0][1])) texts.push(["in the working tree", text]);
  }
  const pinned = PINNED.get(path);
  const first = firstAdded.get(path);
  const expected = pinned ?? (first === undefined ? undefined : checksum(git(["show", `${first}:${path}`])));
  if (expected === undefined) {
    // No commit adds it by itself: a merge brought it in while resolving a conflict. Nothing to compare with.
    console.warn(`check-migrations: warning: ${path} has no commit that added it, not checked`);
    continue;
  }
  for (const [where, text] of texts) {
    if (checksum(text) === expected) continue;
    const since = pinned
      ? "since its text was pinned in scripts/check-migrations.mjs"
      : `since the commit that added it (${first.slice(0, 12)})`;
    problems.push(`${path} has changed ${where} ${since}`);
  }
}
const present = new Set(atHead);
for (const path of firstAdded.keys())
  if (!present.has(path) && !REMOVED.has(path)) problems.push(`${path} was removed or renamed`);

if (problems.length > 0) {
  console.error(
    `check-migrations: a migration that exists must never change: it may already be applied to a database, which ` +
      `would never see the edit. Restore it, and add a new migration instead.\n${problems.map((p) => `  ${p}`).join("\n")}`,
  );
  process.exit(1);
}
console.log(`check-migrations: ${atHead.length} migrations, each as first committed (or as pinned)`);
