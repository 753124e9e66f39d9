#!/usr/bin/env node
// The test runner: every *.test.ts under src/ and test/ belongs to exactly one of two tiers (docs/testing.md).
//   npm test                    the fast tier: unit suites and the in-process API, MCP and dashboard suites
//   npm run test:system         the system tier: suites that start processes or a browser (test/system/)
//   node scripts/run-tests.mjs [--tier fast|system|all] [path-substring ...]
// With path substrings, only the matching files of the tier run (`all` when no tier is given, so that one
// suite runs wherever it lives). A test file that no tier or both tiers claim stops every run: a new folder
// under test/ must be given a tier here, or its tests would silently never run.
// Node 20's --test takes no globs, so the files are listed here.
import { spawnSync } from "node:child_process";
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Each tier's folders (prefixes of a test file's path); together they must hold every test file once. */
const TIERS = {
  fast: [
    "src/",
    "test/access/",
    "test/architecture/",
    "test/contracts/",
    "test/customers/",
    "test/dashboard/",
    "test/database/",
    "test/http/",
    "test/invoices/",
    "test/kernel/",
    "test/mcp/",
    "test/usage/",
    "test/webhooks/",
  ],
  system: ["test/system/", "test/corpus/"],
};

function findTests(dir) {
  const found = [];
  for (const name of readdirSync(dir)) {
    if (name === "node_modules" || name.startsWith(".")) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) found.push(...findTests(path));
    else if (name.endsWith(".test.ts")) found.push(path);
  }
  return found;
}

/** Every test file's tier; exits naming the files that have none, or more than one. */
function tiersOf(files) {
  const tierOf = new Map();
  const wrong = [];
  for (const file of files) {
    const path = file.split("\\").join("/");
    const claimed = Object.keys(TIERS).filter((tier) => TIERS[tier].some((prefix) => path.startsWith(prefix)));
    if (claimed.length === 1) tierOf.set(file, claimed[0]);
    else wrong.push(`${file}: ${claimed.length === 0 ? "in no tier" : `in ${claimed.join(" and ")}`}`);
  }
  if (wrong.length > 0) {
    console.error(`Every test file belongs to exactly one tier (scripts/run-tests.mjs, TIERS):\n${wrong.join("\n")}`);
    process.exit(1);
  }
  return tierOf;
}

const args = process.argv.slice(2);
let tier;
const tierAt = args.indexOf("--tier");
if (tierAt >= 0) {
  tier = args[tierAt + 1];
  args.splice(tierAt, 2);
  if (tier !== "all" && !(tier in TIERS)) {
    console.error(`--tier takes fast, system or all, not ${tier}`);
    process.exit(1);
  }
}
const filter = args;
const allFiles = [...findTests("src"), ...findTests("test")].sort();
const tierOf = tiersOf(allFiles);
tier ??= filter.length > 0 ? "all" : "fast";
let files = tier === "all" ? allFiles : allFiles.filter((f) => tierOf.get(f) === tier);
if (filter.length > 0) files = files.filter((f) => filter.some((part) => f.includes(part)));
if (files.length === 0) {
  console.error("no test files matched");
  process.exit(1);
}
if (!process.env.TEST_DATABASE_URL) {
  console.log("TEST_DATABASE_URL is not set: the PostgreSQL suites are reported as skipped.");
}
const result = spawnSync(
  process.execPath,
  ["--import", "tsx", "--test", "--test-concurrency=2", "--test-reporter=spec", ...files],
  { stdio: "inherit", env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? "silent" } },
);
process.exit(result.status ?? 1);
