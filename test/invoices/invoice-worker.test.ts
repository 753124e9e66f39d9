/**
 * Closing a period by itself (docs/decisions.md, "Invoices", lifecycle): the invoice worker issues every draft
 * whose billing period ended more than BILLING_INVOICE_GRACE ago, exactly once with two processes at work and
 * a process that dies in the middle of issuing one; late events are refused afterwards. Its own database:
 * the worker serves every company in it.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { createApp, type App } from "../../src/app.js";
import type { Database } from "../../src/db/database.js";
import {
  companyWithContract,
  getInvoice,
  invoiceFor,
  invoicesOf,
  submit,
  submitAccepted,
  usageEvent,
} from "../support/api.js";
import { describeEachEngine, testConfig, type TestApp } from "../support/harness.js";

const GRACE = { BILLING_INVOICE_GRACE: "3d" };

/**
 * A second service process on the same database. Its connection fails while it issues its first invoice; with
 * `dies`, every query after that fails too (the process is dead, as after kill -9) until `revive()`.
 */
async function processThatFailsWhileIssuing(
  t: TestApp,
  { dies }: { dies: boolean },
): Promise<{ app: App; failed: () => boolean; revive: () => void }> {
  const base = t.app.db;
  let armed = true;
  let failed = false;
  let dead = false;
  const guard = () => (dead ? Promise.reject(new Error("the process is dead")) : null);
  const db: Database = {
    engine: base.engine,
    query: (sql, params) => guard() ?? base.query(sql, params),
    ping: () => base.ping(),
    close: async () => {},
    transaction: (work) =>
      base.transaction((tx) =>
        work({
          query: (sql, params) => {
            if (armed && sql.includes("SET status = 'issued'")) {
              armed = false;
              failed = true;
              dead = dies;
              // What kill -9 leaves behind: a transaction that never commits.
              return Promise.reject(new Error("connection lost"));
            }
            return guard() ?? tx.query(sql, params);
          },
        }),
      ),
  };
  const app = await createApp(testConfig(GRACE), { db, clock: t.clock });
  return { app, failed: () => failed, revive: () => (dead = false) };
}

describeEachEngine(
  "invoice worker",
  (t) => {
    it("issues a draft once its period has been over for the grace period, not a moment before", async () => {
      t().clock.set(new Date("2026-03-20T12:00:00.000Z"));
      const { key, contract } = await companyWithContract(t());
      await submitAccepted(t(), key, [usageEvent(contract.id)]);
      // April's event once April has begun: before that it would be refused as timestamp_in_future.
      t().clock.set(new Date("2026-04-01T12:00:00.000Z"));
      await submitAccepted(t(), key, [usageEvent(contract.id, { timestamp: "2026-04-01T10:00:00.000Z" })]);
      const march = await invoiceFor(t(), key, contract.id);
      const worker = t().app.invoiceWorker!;
      assert.ok(worker, "BILLING_INVOICE_GRACE=3d runs the invoice worker");

      t().clock.set(new Date("2026-04-03T23:59:59.999Z"));
      await worker.runOnce();
      assert.equal(
        (await getInvoice(t(), key, march.number)).status,
        "draft",
        "3 days after March 31 ends is April 4, 00:00",
      );

      t().clock.set(new Date("2026-04-04T00:00:00.000Z"));
      assert.ok((await worker.runOnce()) >= 1);
      const issued = await getInvoice(t(), key, march.number);
      assert.equal(issued.status, "issued");
      assert.equal(issued.issued_date, "2026-04-04");
      assert.equal(issued.due_date, "2026-05-04", "Net 30 when the customer has no terms");
      assert.equal(issued.total, 1000, "projected first: trued up to the monthly minimum");
      assert.equal((await invoiceFor(t(), key, contract.id, "2026-04-01")).status, "draft", "April is still open");

      const late = await submit(t(), key, [usageEvent(contract.id)]);
      assert.equal(late.events[0]!.error?.code, "period_closed");
      assert.deepEqual(await getInvoice(t(), key, march.number), issued);
    });

    it("issues each due draft exactly once with two processes at work and one that dies mid-way", async () => {
      t().clock.set(new Date("2026-05-01T12:00:00.000Z"));
      const companies = [];
      for (let i = 0; i < 4; i++) {
        const company = await companyWithContract(t());
        await submitAccepted(t(), company.key, [
          usageEvent(company.contract.id, { timestamp: "2026-05-02T00:00:00.000Z", quantity: i + 1 }),
        ]);
        companies.push(company);
      }
      t().clock.set(new Date("2026-06-04T00:00:01.000Z"));
      const other = await processThatFailsWhileIssuing(t(), { dies: true });
      try {
        // The other process dies while issuing the first due draft: nothing of it stays.
        assert.equal(await other.app.invoiceWorker!.runOnce(), 0);
        assert.ok(other.failed());
        const stillDraft = (
          await Promise.all(companies.map((c) => invoiceFor(t(), c.key, c.contract.id, "2026-05-01")))
        ).filter((i) => i.status === "draft");
        assert.equal(stillDraft.length, companies.length, "the dead process's transaction left every draft a draft");
        for (const draft of stillDraft)
          assert.equal(
            draft.line_items.some((l) => l.kind === "minimum"),
            false,
            "nor projected it",
          );

        other.revive();
        // Both processes at once (the other one restarted): every due draft issued once (the worker serves
        // every company of the database: the earlier test's April draft is due too).
        const due = Number(
          (
            await t().app.db.query<{ n: string }>(
              "SELECT count(*)::text AS n FROM invoices WHERE status = 'draft' AND period_end <= '2026-05-31'",
            )
          ).rows[0]!.n,
        );
        assert.ok(due >= companies.length);
        const [mine, theirs] = await Promise.all([
          t().app.invoiceWorker!.runOnce(),
          other.app.invoiceWorker!.runOnce(),
        ]);
        assert.equal(mine + theirs, due, `issued ${mine} + ${theirs}`);
        assert.equal(
          (await t().app.invoiceWorker!.runOnce()) + (await other.app.invoiceWorker!.runOnce()),
          0,
          "nothing left to issue",
        );
        for (const [i, c] of companies.entries()) {
          const invoices = await invoicesOf(t(), c.key, c.contract.id);
          assert.equal(invoices.length, 1);
          assert.equal(invoices[0]!.status, "issued");
          assert.equal(invoices[0]!.issued_date, "2026-06-04");
          assert.equal(invoices[0]!.total, 1000, `company ${i}`);
          assert.deepEqual((await t().app.services.invariants.verify(c.companyId)).problems, []);
        }
      } finally {
        await other.app.close();
      }
    });

    it("goes on with the other due drafts when one cannot be issued, and issues that one in a later round", async () => {
      t().clock.set(new Date("2026-07-01T12:00:00.000Z"));
      const companies = [];
      for (let i = 0; i < 3; i++) {
        const company = await companyWithContract(t());
        await submitAccepted(t(), company.key, [
          usageEvent(company.contract.id, { timestamp: "2026-07-02T00:00:00.000Z" }),
        ]);
        companies.push(company);
      }
      t().clock.set(new Date("2026-08-04T00:00:01.000Z"));
      const other = await processThatFailsWhileIssuing(t(), { dies: false });
      try {
        assert.equal(await other.app.invoiceWorker!.runOnce(), companies.length - 1, "all but the one that failed");
        assert.ok(other.failed());
        const statuses = await Promise.all(
          companies.map(async (c) => (await invoiceFor(t(), c.key, c.contract.id, "2026-07-01")).status),
        );
        assert.deepEqual(statuses.filter((s) => s === "draft").length, 1, statuses.join());
        assert.equal(await other.app.invoiceWorker!.runOnce(), 1, "the next round issues it");
        for (const c of companies)
          assert.equal((await invoiceFor(t(), c.key, c.contract.id, "2026-07-01")).status, "issued");
      } finally {
        await other.app.close();
      }
    });
  },
  { env: GRACE },
);

describeEachEngine(
  "invoice worker switched off",
  (t) => {
    it("runs no invoice worker with BILLING_INVOICE_GRACE=off: drafts are issued by hand only", async () => {
      assert.equal(t().app.invoiceWorker, null);
      t().clock.set(new Date("2026-03-20T12:00:00.000Z"));
      const { key, contract } = await companyWithContract(t());
      await submitAccepted(t(), key, [usageEvent(contract.id)]);
      t().clock.set(new Date("2027-01-01T00:00:00.000Z"));
      assert.equal((await invoiceFor(t(), key, contract.id)).status, "draft");
    });
  },
  { env: { BILLING_INVOICE_GRACE: "off" } },
);
