#!/usr/bin/env node
// `npm run lint:openapi:spectral` (under tsx: it loads the TypeScript app): the OpenAPI document exactly as
// GET /v1/openapi.json serves it, checked by Spectral's `spectral:oas` ruleset (@stoplight/spectral-cli), beside
// Redocly's recommended rules (lint-openapi.mjs). Any problem it reports, of any severity, fails it
// (docs/api.md, "The OpenAPI document"). test/http/openapi-lint-rules.test.ts holds the same rules in the fast tier.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { servedOpenApi } from "./served-openapi.mjs";

const document = await servedOpenApi();

const dir = mkdtempSync(join(tmpdir(), "openapi-spectral-"));
try {
  const file = join(dir, "openapi.json");
  const ruleset = join(dir, ".spectral.json");
  writeFileSync(file, document);
  writeFileSync(ruleset, JSON.stringify({ extends: ["spectral:oas"] }));
  const spectral = fileURLToPath(import.meta.resolve("@stoplight/spectral-cli/dist/index.js"));
  const result = spawnSync(
    process.execPath,
    [spectral, "lint", "--ruleset", ruleset, "--format", "json", "--fail-severity", "hint", "--quiet", file],
    { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, stdio: ["ignore", "pipe", "inherit"] },
  );
  if (result.error) throw result.error;
  const problems = result.stdout.trim() === "" ? [] : JSON.parse(result.stdout);
  for (const problem of problems) {
    console.log(`severity ${problem.severity} ${problem.code}: ${problem.message} (${problem.path.join(".")})`);
  }
  console.log(`OpenAPI document (spectral lint, spectral:oas): ${problems.length} problems`);
  process.exitCode = problems.length === 0 && result.status === 0 ? 0 : 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
