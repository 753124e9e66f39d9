#!/usr/bin/env node
// `npm run lint:openapi` (under tsx: it loads the TypeScript app): the OpenAPI document exactly as
// GET /v1/openapi.json serves it, written to a temporary file and checked by Redocly's recommended rules
// (docs/api.md, "The OpenAPI document"). Any error or warning fails it.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { servedOpenApi } from "./served-openapi.mjs";

const document = await servedOpenApi();

const dir = mkdtempSync(join(tmpdir(), "openapi-"));
try {
  const file = join(dir, "openapi.json");
  writeFileSync(file, document);
  const redocly = fileURLToPath(import.meta.resolve("@redocly/cli/bin/cli.js"));
  const result = spawnSync(process.execPath, [redocly, "lint", "--extends", "recommended", "--format", "json", file], {
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
    stdio: ["ignore", "pipe", "inherit"],
    // No usage report to Redocly, no update notice: CI runs offline.
    env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true" },
  });
  if (result.error || !result.stdout)
    throw result.error ?? new Error(`redocly lint printed nothing (exit ${result.status})`);
  // Redocly fails on errors only; a warning fails here too.
  const { totals, problems } = JSON.parse(result.stdout);
  for (const problem of problems) {
    console.log(`${problem.severity} ${problem.ruleId}: ${problem.message} (${problem.location?.[0]?.pointer ?? ""})`);
  }
  console.log(`OpenAPI document (redocly lint, recommended): ${totals.errors} errors, ${totals.warnings} warnings`);
  process.exitCode = totals.errors + totals.warnings === 0 ? 0 : 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
