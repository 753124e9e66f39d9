#!/usr/bin/env node
// Compiles src/ to dist/ (tsc -p tsconfig.build.json) and stamps the build with a fingerprint of its sources.
// With --if-stale (npm start), compiles only when the sources differ from the stamped ones: a restart costs a
// walk of src/ (~10 ms), not a compile (~9 s). The fingerprint is every source's path, size and modification
// time (every file under src/, the tsconfig files, package-lock.json), so that any change counts: a newer
// file, an older one restored over it, a file added or deleted.
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { dirname, join, relative } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const stamp = join(root, "dist", ".build-stamp");

function fingerprint() {
  const hash = createHash("sha256");
  const add = (path) => {
    const info = statSync(path);
    if (info.isDirectory()) {
      for (const name of readdirSync(path).sort()) add(join(path, name));
      return;
    }
    hash.update(`${relative(root, path)}\0${info.size}\0${info.mtimeMs}\n`);
  };
  add(join(root, "src"));
  for (const file of ["tsconfig.json", "tsconfig.build.json", "package-lock.json"])
    if (existsSync(join(root, file))) add(join(root, file));
  return hash.digest("hex");
}

/** Compiled files whose source is gone: a deleted module must not live on in dist/ (a running server keeps the rest). */
function removeOrphans(built, sources) {
  if (!existsSync(built)) return;
  for (const name of readdirSync(built)) {
    const path = join(built, name);
    if (statSync(path).isDirectory()) {
      if (!existsSync(join(sources, name))) rmSync(path, { recursive: true, force: true });
      else removeOrphans(path, join(sources, name));
      continue;
    }
    const stem = name.replace(/\.(js|mjs|d\.ts)(\.map)?$/, "");
    const source = [".ts", ".mjs"].some((ext) => existsSync(join(sources, `${stem}${ext}`)));
    if (!source) rmSync(path, { force: true });
  }
}

const ifStale = process.argv.includes("--if-stale");
const before = fingerprint();
if (ifStale && existsSync(stamp) && readFileSync(stamp, "utf8").trim() === before) process.exit(0);

const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
if (!existsSync(tsc)) {
  // An install without devDependencies runs the build it shipped with.
  if (ifStale && existsSync(join(root, "dist", "src", "main.js"))) {
    process.stderr.write(
      "sources differ from the build in dist/, but TypeScript is not installed: running the existing build\n",
    );
    process.exit(0);
  }
  process.stderr.write("cannot build: TypeScript is not installed (run npm install)\n");
  process.exit(1);
}
if (ifStale) process.stderr.write("sources changed since the last build: compiling (about 10 s)...\n");
const run = spawnSync(process.execPath, [tsc, "-p", join(root, "tsconfig.build.json")], {
  stdio: "inherit",
  cwd: root,
});
if (run.status !== 0) process.exit(run.status ?? 1);
removeOrphans(join(root, "dist", "src"), join(root, "src"));
// The fingerprint of the sources as the compile began: a file saved during the compile differs, and is built next time.
writeFileSync(stamp, `${before}\n`);
