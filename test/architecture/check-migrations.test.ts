/**
 * The check that refuses a change to an existing migration (scripts/check-migrations.mjs, `npm run
 * check:migrations` in CI), run against a repository of its own in a temporary folder: a new migration passes,
 * an edited, renamed or uncommitted-edited one fails naming the file, a function file may change, and a
 * shallow clone fails unless --allow-shallow. No database.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { after, before, describe, it } from "node:test";

const SCRIPT = join(dirname(fileURLToPath(import.meta.url)), "../../scripts/check-migrations.mjs");

/** The environment without git's own variables, so that a run inside a git hook still uses the test's folder. */
const ENV = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith("GIT_")));

function git(cwd: string, ...args: string[]): string {
  const result = spawnSync("git", args, { cwd, encoding: "utf8", env: ENV });
  assert.equal(result.status, 0, `git ${args.join(" ")}: ${result.stderr}`);
  return result.stdout;
}

function check(cwd: string, ...args: string[]): { status: number | null; output: string } {
  const result = spawnSync(process.execPath, [SCRIPT, ...args], { cwd, encoding: "utf8", env: ENV });
  return { status: result.status, output: `${result.stdout}${result.stderr}` };
}

describe("check-migrations: an existing migration never changes", () => {
  let dir: string;
  let repo: string;
  const write = (path: string, text: string) => {
    mkdirSync(dirname(join(repo, path)), { recursive: true });
    writeFileSync(join(repo, path), text);
  };
  const commit = (message: string) => {
    git(repo, "add", "-A");
    git(repo, "commit", "--quiet", "--no-verify", "-m", message);
  };

  before(() => {
    dir = mkdtempSync(join(tmpdir(), "check-migrations-"));
    repo = join(dir, "repo");
    mkdirSync(repo);
    git(repo, "init", "--quiet");
    git(repo, "config", "user.email", "test@example.com");
    git(repo, "config", "user.name", "Test");
    git(repo, "config", "commit.gpgsign", "false");
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("passes a first migration, then a new one added beside it", () => {
    write("migrations/0001_a.sql", "CREATE TABLE a (id int);\n");
    commit("0001");
    const first = check(repo);
    assert.equal(first.status, 0, first.output);

    write("migrations/0002_b.sql", "CREATE TABLE b (id int);\n");
    commit("0002");
    const second = check(repo);
    assert.equal(second.status, 0, second.output);
  });

  it("lets a function file change: those run again at every start", () => {
    write("migrations/functions/f.sql", "CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 1';\n");
    commit("f");
    write("migrations/functions/f.sql", "CREATE OR REPLACE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT 2';\n");
    commit("f changed");
    const result = check(repo);
    assert.equal(result.status, 0, result.output);
  });

  it("fails on an uncommitted edit of a migration, naming it", () => {
    write("migrations/0002_b.sql", "CREATE TABLE b (id bigint);\n");
    const result = check(repo);
    assert.equal(result.status, 1, result.output);
    assert.match(result.output, /migrations\/0002_b\.sql has changed in the working tree/);
    git(repo, "checkout", "--quiet", "--", "migrations/0002_b.sql");
  });

  it("fails once a migration is edited in a later commit, naming it; taken from the directory given too", () => {
    write("migrations/0001_a.sql", "CREATE TABLE a (id int, name text);\n");
    commit("edit 0001");
    const result = check(repo);
    assert.equal(result.status, 1, result.output);
    assert.match(result.output, /migrations\/0001_a\.sql has changed at HEAD since the commit that added it/);
    assert.match(result.output, /add a new migration instead/);
    assert.doesNotMatch(result.output, /0002_b/);

    const elsewhere = check(dir, repo);
    assert.equal(elsewhere.status, 1, elsewhere.output);
    assert.match(elsewhere.output, /0001_a\.sql/);

    write("migrations/0001_a.sql", "CREATE TABLE a (id int);\n");
    commit("restore 0001");
    const restored = check(repo);
    assert.equal(restored.status, 0, restored.output);
  });

  it("fails on a renamed migration: under its new name it would run again", () => {
    git(repo, "mv", "migrations/0002_b.sql", "migrations/0002_bee.sql");
    commit("rename 0002");
    const result = check(repo);
    assert.equal(result.status, 1, result.output);
    assert.match(result.output, /migrations\/0002_b\.sql was removed or renamed/);
  });

  it("refuses a shallow clone, whose history may miss a change, unless --allow-shallow", () => {
    // The clone holds HEAD alone: the rename above is not in it, so with --allow-shallow the check passes.
    const shallow = join(dir, "shallow");
    git(dir, "clone", "--quiet", "--depth", "1", `file://${repo}`, shallow);
    const refused = check(shallow);
    assert.equal(refused.status, 1, refused.output);
    assert.match(refused.output, /shallow/);
    const allowed = check(shallow, "--allow-shallow");
    assert.equal(allowed.status, 0, allowed.output);
    assert.match(allowed.output, /warning: shallow clone/);
  });

  it("fails outside a git repository", () => {
    const result = check(dir);
    assert.equal(result.status, 1, result.output);
    assert.match(result.output, /not in a git repository/);
  });
});
