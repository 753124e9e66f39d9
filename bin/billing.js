#!/usr/bin/env node
// The `billing` command (docs/operations.md). Runs the compiled CLI; `npm install` builds it.
import { existsSync } from "node:fs";
const cli = new URL("../dist/src/surfaces/cli/cli.js", import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write("billing: not built yet; run `npm install` (or `npm run build`) in the project folder first\n");
  process.exit(1);
}
await import(cli.href);
