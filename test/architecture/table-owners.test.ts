/**
 * One writing module per table (docs/architecture.md, "Who writes each table"): the SQL counterpart of
 * dependency-cruiser's `domain-modules-closed`, which sees imports but not the statements inside them. Reads every
 * repository's SQL and every database function, and checks each write (INSERT, UPDATE, DELETE) against the
 * owners' table of docs/architecture.md, which this test reads: the document is the rule's one home.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, it } from "node:test";
import { fileURLToPath } from "node:url";
import { repositoryFiles } from "../support/repositories.js";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

interface Owners {
  /** table → its writing module */
  tables: Map<string, string>;
  /** function → the tables it writes for another module than its caller's */
  functionExtras: Map<string, Set<string>>;
}

/** The owners' tables of docs/architecture.md's section. */
function readOwners(markdown: string): Owners {
  const section = markdown.split("## Who writes each table")[1]?.split("\n## ")[0] ?? "";
  const tables = new Map<string, string>();
  const functionExtras = new Map<string, Set<string>>();
  for (const row of section.split("\n").filter((l) => l.startsWith("| `"))) {
    const cells = row.split("|").map((c) => c.trim());
    const name = cells[1]?.replace(/`/g, "") ?? "";
    if (cells.length === 4) tables.set(name, cells[2] ?? "");
    else functionExtras.set(name, new Set((cells[2] ?? "").split(",").map((t) => t.trim().replace(/`/g, ""))));
  }
  return { tables, functionExtras };
}

/** A write found in SQL: the table, or `null` for a table named at run time (`UPDATE ${table}`). */
interface Write {
  table: string | null;
  statement: string;
}

/** The writes of a piece of source: SQL keywords in capitals, as every statement of ours is written. */
function writesIn(source: string): Write[] {
  const writes: Write[] = [];
  for (const m of source.matchAll(/\b(INSERT\s+INTO|UPDATE|DELETE\s+FROM|MERGE\s+INTO)\s+(\$\{|[a-z_][a-z0-9_]*)/g)) {
    const table = m[2] === "${" ? null : (m[2] ?? null);
    writes.push({ table, statement: m[0] });
  }
  return writes;
}

/** The functions of migrations/functions/ a source calls. */
const callsOf = (source: string, functions: readonly string[]) => functions.filter((f) => source.includes(`${f}(`));

interface Violation {
  where: string;
  statement: string;
  why: string;
}

/**
 * Every write of the repositories (and of the functions they call) checked against the owners: a module writes
 * only its own tables, a function the tables of the module that calls it and the extras listed for it.
 */
function violations(
  repositories: readonly { module: string; path: string; source: string }[],
  functions: ReadonlyMap<string, string>,
  owners: Owners,
): Violation[] {
  const found: Violation[] = [];
  const check = (module: string, where: string, writes: Write[], extras: ReadonlySet<string> = new Set()) => {
    for (const write of writes) {
      if (write.table === null) {
        found.push({ where, statement: write.statement, why: "a table named at run time cannot be checked" });
        continue;
      }
      const owner = owners.tables.get(write.table);
      if (owner === undefined) {
        // SQL keywords in prose ("UPDATE the ...") or a table nobody listed: both want a look.
        found.push({ where, statement: write.statement, why: `\`${write.table}\` has no owner in the table` });
      } else if (owner !== module && !extras.has(write.table)) {
        found.push({ where, statement: write.statement, why: `\`${write.table}\` is ${owner}'s, not ${module}'s` });
      }
    }
  };
  for (const repository of repositories) {
    check(repository.module, repository.path, writesIn(repository.source));
    for (const name of callsOf(repository.source, [...functions.keys()])) {
      check(
        repository.module,
        `${name} (called by ${repository.path})`,
        writesIn(functions.get(name) ?? ""),
        owners.functionExtras.get(name),
      );
    }
  }
  return found;
}

const owners = readOwners(readFileSync(join(ROOT, "docs/architecture.md"), "utf8"));
const functionsDir = join(ROOT, "migrations/functions");
const functions = new Map(
  readdirSync(functionsDir)
    .filter((f) => f.endsWith(".sql"))
    .map((f) => [f.replace(/\.sql$/, ""), readFileSync(join(functionsDir, f), "utf8")] as const),
);

describe("one writing module per table", () => {
  it("reads the owners' table of docs/architecture.md", () => {
    assert.ok(owners.tables.size >= 20, `${owners.tables.size} tables read`);
    assert.equal(owners.tables.get("usage_events"), "usage");
  });

  it("has an owner for every table the migrations create, and no owner of a table that does not exist", () => {
    const created = new Set<string>();
    for (const file of readdirSync(join(ROOT, "migrations")).filter((f) => f.endsWith(".sql"))) {
      const sql = readFileSync(join(ROOT, "migrations", file), "utf8");
      for (const m of sql.matchAll(/CREATE TABLE (?:IF NOT EXISTS )?([a-z_]+)/g)) created.add(m[1] ?? "");
    }
    created.delete("schema_migrations"); // the migrator's own, written by src/db/migrate.ts
    assert.deepEqual([...owners.tables.keys()].sort(), [...created].sort());
  });

  it("finds no module writing a table it does not own", () => {
    const found = violations(repositoryFiles(), functions, owners);
    assert.deepEqual(
      found.map((v) => `${v.where}: ${v.statement}: ${v.why}`),
      [],
    );
  });

  it("fails on a repository that writes another module's table, or a table named at run time", () => {
    // The fixtures: a usage repository with one deliberately wrong line, and one that names its table at run time.
    const fixtures = [
      {
        module: "usage",
        path: "usage/wrong-repository.ts",
        source: `await tx.query("UPDATE usage_events SET invoice_number = $3 WHERE company_id = $1");
                 await tx.query("UPDATE credit_ledger SET invoice_number = $3 WHERE company_id = $1");`,
      },
      {
        module: "invoices",
        path: "invoices/loop-repository.ts",
        source: "for (const table of tables) await tx.query(`UPDATE ${table} SET invoice_number = $3`);",
      },
    ];
    assert.deepEqual(
      violations(fixtures, functions, owners).map((v) => `${v.where}: ${v.why}`),
      [
        "usage/wrong-repository.ts: `credit_ledger` is credits's, not usage's",
        "invoices/loop-repository.ts: a table named at run time cannot be checked",
      ],
    );
  });

  it("fails on a database function that writes for a module other than its caller's, unless listed", () => {
    const fixtures = [
      {
        module: "credits",
        path: "credits/calls-ingest-repository.ts",
        source: "SELECT billing_ingest_usage_lines($1)",
      },
    ];
    const found = violations(fixtures, functions, owners).map((v) => v.why);
    assert.ok(found.includes("`usage_events` is usage's, not credits's"), found.join("; "));
  });
});
