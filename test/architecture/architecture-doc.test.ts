/**
 * docs/architecture.md describes the code as it is: every file or folder it cites in backticks exists. Paths
 * are written from the repository's root (`src/db/migrate.ts`, `migrations/0013_…`), or from `src/` or
 * `src/domain/` where the text is about those (`domain/usage/pricers.ts`, `usage/batch-writer.ts`,
 * `invoices/lifecycle/change-invoice.ts`): every module of src/domain, at any depth.
 */
import assert from "node:assert/strict";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { it } from "node:test";
import { REPO_ROOT } from "../support/service-process.js";

const ROOTS = /^(src|migrations|test|scripts|bench|docs|bin)\//;
const UNDER_SRC = /^(domain|surfaces|platform|db|client)\//;
const DOMAIN_MODULES = readdirSync(join(REPO_ROOT, "src", "domain"), { withFileTypes: true })
  .filter((entry) => entry.isDirectory())
  .map((entry) => entry.name);
const UNDER_DOMAIN = new RegExp(`^(${DOMAIN_MODULES.join("|")})/[\\w./-]+\\.(ts|mjs)$`);

/** The repository path a cited token names, or undefined when it is not a path (or a pattern such as `<name>.sql`). */
function pathOf(token: string): string | undefined {
  const path = token.replace(/[,.:;)]+$/, "");
  if (/[<>*{}]/.test(path)) return undefined;
  if (ROOTS.test(path)) return path;
  if (UNDER_SRC.test(path)) return `src/${path}`;
  if (UNDER_DOMAIN.test(path)) return `src/domain/${path}`;
  return undefined;
}

/** A migration cited by its number alone (`migrations/0013`) names the file that starts so. */
function exists(path: string): boolean {
  if (existsSync(join(REPO_ROOT, path))) return true;
  const migration = /^migrations\/(\d{4})$/.exec(path);
  return !!migration && readdirSync(join(REPO_ROOT, "migrations")).some((name) => name.startsWith(`${migration[1]}_`));
}

it("cites only paths that exist in docs/architecture.md", () => {
  const text = readFileSync(join(REPO_ROOT, "docs", "architecture.md"), "utf8");
  const cited = [...text.matchAll(/`([^`\s]+)`/g)]
    .map((m) => pathOf(m[1]!))
    .filter((p): p is string => p !== undefined);
  assert.ok(cited.length > 40, `the page cites paths (${cited.length} found)`);
  const missing = [...new Set(cited.filter((path) => !exists(path)))];
  assert.deepEqual(missing, [], "paths cited by docs/architecture.md that do not exist");
});

it("counts a path that does not exist as missing", () => {
  assert.equal(pathOf("`src/domain/usage/no-such-file.ts`".slice(1, -1)), "src/domain/usage/no-such-file.ts");
  assert.equal(pathOf("invoices/lifecycle/no-such-file.ts"), "src/domain/invoices/lifecycle/no-such-file.ts");
  assert.equal(pathOf("account/no-such-file.ts"), "src/domain/account/no-such-file.ts");
  assert.equal(exists("src/domain/usage/no-such-file.ts"), false);
  assert.equal(exists("migrations/0099"), false);
  assert.equal(exists("migrations/0013"), true);
});
