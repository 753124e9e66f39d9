#!/usr/bin/env node
// Compiles src/ to dist/ (tsc -p tsconfig.build.json) and stamps the build. With --if-stale (npm start),
// compiles only when a source is newer than the stamp: a restart costs a directory walk (~10 ms), not a
// compile (~9 s). Sources: every file and folder under src/ (a deleted file changes its folder's time), the
// tsconfig files and package-lock.json (a new TypeScript).
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const stamp = join(root, "dist", ".build-stamp");

function newestSource() {
  let newest = 0;
  const visit = (path) => {
    const info = statSync(path);
    newest = Math.max(newest, info.mtimeMs);
    if (info.isDirectory()) for (const name of readdirSync(path)) visit(join(path, name));
  };
  visit(join(root, "src"));
  for (const file of ["tsconfig.json", "tsconfig.build.json", "package-lock.json"]) {
    if (existsSync(join(root, file))) newest = Math.max(newest, statSync(join(root, file)).mtimeMs);
  }
  return newest;
}

const ifStale = process.argv.includes("--if-stale");
if (ifStale && existsSync(stamp) && statSync(stamp).mtimeMs >= newestSource()) process.exit(0);

const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
if (!existsSync(tsc)) {
  // An install without devDependencies runs the build it shipped with.
  if (ifStale && existsSync(join(root, "dist", "src", "main.js"))) {
    process.stderr.write("sources are newer than dist/, but TypeScript is not installed: running the existing build\n");
    process.exit(0);
  }
  process.stderr.write("cannot build: TypeScript is not installed (run npm install)\n");
  process.exit(1);
}
if (ifStale) process.stderr.write("sources changed since the last build: compiling (about 10 s)...\n");
const started = newestSource();
const run = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], { stdio: "inherit", cwd: root });
if (run.status !== 0) process.exit(run.status ?? 1);
// Stamped with the time of the newest source the compile read: a file saved during the compile is newer,
// and is built next time.
writeFileSync(stamp, `${new Date().toISOString()}\n`);
utimesSync(stamp, new Date(Math.ceil(started)), new Date(Math.ceil(started)));
