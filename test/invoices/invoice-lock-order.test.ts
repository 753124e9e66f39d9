import { forCompany } from "../../src/db/company-scope.js";
import assert from "node:assert/strict";
import { it } from "node:test";
import { lockInvoices } from "../../src/domain/invoices/invoice-repository.js";
import { describeEachEngine } from "../support/harness.js";
import { anotherContract, companyWithContract, invoiceFor, submitAccepted, usageEvent } from "../support/api.js";

/**
 * Draft invoices are locked in invoice-number order by every writer: the ingest function (migrations/functions/billing_ingest_usage_lines.sql)
 * and `lockInvoices` (the capped path and projection). Two writers that took the same drafts in different
 * orders could each hold one and wait for the other (PostgreSQL then aborts one of them after a second).
 */
describeEachEngine("draft invoice lock order", (t, engine) => {
  it("locks a company's drafts in number order, whatever the order of their contracts", {
    skip: engine === "pglite" ? "PGlite has one connection: nothing else can hold a lock meanwhile" : false,
  }, async () => {
    const { key, companyId, contract } = await companyWithContract(t());
    const other = await anotherContract(t(), key);
    // Contract ids sort one way, draft numbers the other: the later contract's draft is made first.
    const [first, second] = [contract.id, other.id].sort();
    await submitAccepted(t(), key, [usageEvent(second!)]);
    await submitAccepted(t(), key, [usageEvent(first!)]);
    const lower = (await invoiceFor(t(), key, second!)).number;
    const higher = (await invoiceFor(t(), key, first!)).number;
    assert.ok(lower < higher);

    const db = t().app.db;
    let release!: () => void;
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    // Another writer holds the higher-numbered draft.
    const holder = db.transaction(async (tx) => {
      await tx.query("SELECT 1 FROM invoices WHERE company_id = $1 AND number = $2 FOR UPDATE", [companyId, higher]);
      held();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await holding;
    const locker = db.transaction((tx) =>
      lockInvoices(forCompany(tx, companyId), [
        { contractId: first!, periodStart: "2026-03-01" },
        { contractId: second!, periodStart: "2026-03-01" },
      ]),
    );
    try {
      // Wait until the locker is blocked on the held draft.
      for (let waiting = 0; waiting === 0; ) {
        const { rows } = await db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        waiting = rows[0]!.n;
      }
      // In number order it took the lower-numbered draft before it had to wait: that one is locked now.
      await assert.rejects(
        db.transaction((tx) =>
          tx.query("SELECT 1 FROM invoices WHERE company_id = $1 AND number = $2 FOR UPDATE NOWAIT", [
            companyId,
            lower,
          ]),
        ),
        (error: { code?: string }) => error.code === "55P03",
        "the lower-numbered draft is already locked by the waiting writer",
      );
    } finally {
      release();
      await holder;
    }
    const locked = await locker;
    assert.deepEqual(
      locked.map((l) => l.number),
      [lower, higher],
    );
  });
});
