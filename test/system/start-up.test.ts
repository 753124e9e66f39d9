import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, utimesSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { REPO_ROOT, refusedStart } from "../support/service-process.js";
import { migrate } from "../../src/db/migrate.js";
import { openDatabase } from "../../src/db/open-database.js";

describe("npm start builds only what changed", () => {
  // A project of one file beside a copy of the build script, compiled by the repository's TypeScript.
  const root = mkdtempSync(join(tmpdir(), "build-if-stale-"));
  after(() => rmSync(root, { recursive: true, force: true }));
  mkdirSync(join(root, "scripts"));
  mkdirSync(join(root, "src"));
  mkdirSync(join(root, "node_modules"));
  cpSync(join(REPO_ROOT, "scripts", "build.mjs"), join(root, "scripts", "build.mjs"));
  symlinkSync(join(REPO_ROOT, "node_modules", "typescript"), join(root, "node_modules", "typescript"));
  writeFileSync(
    join(root, "tsconfig.json"),
    JSON.stringify({ compilerOptions: { target: "ES2022", module: "NodeNext", outDir: "dist", rootDir: "." } }),
  );
  writeFileSync(join(root, "tsconfig.build.json"), JSON.stringify({ extends: "./tsconfig.json", include: ["src"] }));
  writeFileSync(join(root, "src", "main.ts"), "export const answer: number = 42;\n");

  const build = () => {
    const run = spawnSync(process.execPath, [join(root, "scripts", "build.mjs"), "--if-stale"], {
      cwd: root,
      encoding: "utf8",
    });
    assert.equal(run.status, 0, run.stderr);
    return { compiled: /compiling/.test(run.stderr), stderr: run.stderr };
  };

  it("compiles a project never built, then starts from the build until a source changes", () => {
    assert.equal(build().compiled, true, "no build yet");
    assert.ok(existsSync(join(root, "dist", "src", "main.js")));
    assert.equal(build().compiled, false, "nothing changed: no compile");
    const later = new Date(Date.now() + 60_000);
    utimesSync(join(root, "src", "main.ts"), later, later);
    assert.equal(build().compiled, true, "a newer source is compiled");
    assert.equal(build().compiled, false);
    writeFileSync(join(root, "src", "extra.ts"), "export const more = 1;\n");
    assert.equal(build().compiled, true, "a new file is compiled");
    assert.ok(existsSync(join(root, "dist", "src", "extra.js")));
    // A source restored with an older date (tar, rsync -a, cp -p) is a change too.
    const earlier = new Date(Date.now() - 86_400_000);
    utimesSync(join(root, "src", "main.ts"), earlier, earlier);
    assert.equal(build().compiled, true, "an older source is compiled");
    rmSync(join(root, "src", "extra.ts"));
    assert.equal(build().compiled, true, "a deleted source is a change");
    assert.equal(existsSync(join(root, "dist", "src", "extra.js")), false, "and its compiled file is gone");
    assert.ok(existsSync(join(root, "dist", "src", "main.js")));
    assert.equal(build().compiled, false);
  });
});

describe("a port already in use", () => {
  it("stops the service with one clear line and exit code 1", async () => {
    const holder = createServer();
    await new Promise<void>((resolve) => holder.listen(0, "127.0.0.1", resolve));
    after(() => holder.close());
    const port = (holder.address() as { port: number }).port;
    const line = await refusedStart({ PORT: String(port) });
    assert.match(line, new RegExp(`^cannot start: port ${port} on 127\\.0\\.0\\.1 is already in use`));
  });
});

describe("an applied migration that changed", () => {
  it("stops the service with one line naming the file, and exit code 1", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "frozen-migrations-"));
    after(() => rmSync(dataDir, { recursive: true, force: true }));
    const db = await openDatabase({ kind: "pglite", dataDir });
    await migrate(db);
    // What the database recorded no longer matches the file: as if 0005 had been edited after it was applied.
    await db.query("UPDATE schema_migrations SET checksum = repeat('0', 64) WHERE version = '0005_ingest_function'");
    await db.close();
    const line = await refusedStart({ BILLING_DATA_DIR: dataDir });
    assert.match(
      line,
      /^cannot start: migrations\/0005_ingest_function\.sql has changed since it was applied to this database/,
    );
  });
});

describe("a weak admin token", () => {
  // The tester's two: 32 identical characters started the service; 32 spaces started it with an admin API nobody could use.
  for (const [name, token, reason] of [
    ["32 identical characters", "x".repeat(32), /must have at least 16 different characters \(it has 1\)/],
    ["32 spaces", " ".repeat(32), /must not contain spaces or other whitespace/],
  ] as const) {
    it(`of ${name} stops the service before it listens, with one clear line and exit code 1`, async () => {
      const line = await refusedStart({ BILLING_ADMIN_TOKEN: token });
      assert.match(line, /^cannot start: BILLING_ADMIN_TOKEN /);
      assert.match(line, reason);
    });
  }
});
