/**
 * The invoice lifecycle through the API, on both engines (docs/decisions.md, "Invoices", lifecycle): draft →
 * issued → paid, issued → void; every transition allowed and refused, repeated, raced; issued invoices frozen
 * against later usage and projection; late events refused with period_closed and stored nowhere.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { forCompany } from "../../src/db/company-scope.js";
import {
  INVOICES,
  USAGE,
  addRule,
  createCustomer,
  createSampleContract,
  getInvoice,
  invoiceFor,
  keyWithScopes,
  newEventId,
  project,
  submit,
  submitAccepted,
  usageEvent,
  type Contract,
  minimumWords,
} from "../support/api.js";
import { createApp } from "../../src/app.js";
import type { Database } from "../../src/db/database.js";
import { expectError, expectStatus, waitFor } from "../support/assertions.js";
import { describeEachEngine, testConfig, type TestApp } from "../support/harness.js";

/** Contracts start the day they are made: made on March 1, with March usage, issued on April 6. */
const MARCH_1 = new Date("2026-03-01T08:00:00.000Z");
const TODAY = new Date("2026-04-06T09:30:00.000Z");

const action = (t: TestApp, key: string, number: string, verb: "finalize" | "pay" | "void", payload?: object) =>
  t.call({
    method: "POST",
    url: `${INVOICES}/${encodeURIComponent(number)}/${verb}`,
    key,
    ...(payload === undefined ? {} : { payload }),
  });

/** A company whose customer pays Net 15, with a sample contract and March usage on its draft. */
async function companyWithDraft(t: TestApp) {
  t.clock.set(MARCH_1);
  const { key, companyId } = await t.newCompany();
  const customer = await createCustomer(t, key, { name: "Lifecycle Ltd", payment_terms_days: 15 });
  const contract = await createSampleContract(t, key, customer.id);
  await submitAccepted(t, key, [
    usageEvent(contract.id, { quantity: 3 }),
    usageEvent(contract.id, { metric: "international_wire" }),
  ]);
  const draft = await invoiceFor(t, key, contract.id);
  t.clock.set(TODAY);
  return { key, companyId, contract, number: draft.number };
}

async function issued(t: TestApp) {
  const company = await companyWithDraft(t);
  expectStatus(await action(t, company.key, company.number, "finalize"), 200);
  return company;
}

describeEachEngine("invoice lifecycle", (t, engine) => {
  it("finalizes a draft as projection would, then freezes it: issued today, due by the customer's terms", async () => {
    const { key, contract, number } = await companyWithDraft(t());
    const res = await action(t(), key, number, "finalize");
    expectStatus(res, 200);
    const invoice = res.json();
    assert.equal(invoice.status, "issued");
    assert.equal(invoice.number, number);
    assert.equal(invoice.issued_date, "2026-04-06");
    assert.equal(invoice.due_date, "2026-04-21", "Net 15");
    assert.equal(invoice.paid_date, null);
    // 3 × 20 + 30 = 90.00 of usage, trued up to the sample's 1000.00 monthly minimum, as projection does.
    assert.deepEqual(
      invoice.line_items.map((l: { description: string; amount: number }) => [l.description, l.amount]),
      [
        ["Domestic wire", 60],
        ["International wire", 30],
        [minimumWords("1,000.00", "90.00"), 910],
      ],
    );
    assert.equal(invoice.total, 1000);
    assert.deepEqual(await getInvoice(t(), key, number), invoice, "GET answers what finalize answered");
    const listed = (
      await t().call({ method: "GET", url: `${INVOICES}?contract=${contract.id}&status=issued`, key })
    ).json().data;
    assert.deepEqual(
      listed.map((i: { number: string }) => i.number),
      [number],
      "listed under status=issued",
    );
  });

  it("answers a finalized invoice unchanged when it is finalized again", async () => {
    const { key, number } = await issued(t());
    const before = await getInvoice(t(), key, number);
    t().clock.advance(86_400_000);
    const again = await action(t(), key, number, "finalize");
    expectStatus(again, 200);
    assert.deepEqual(again.json(), before);
  });

  it("marks an issued invoice paid today by default, or on the date given; paying again on that date changes nothing", async () => {
    const a = await issued(t());
    const paid = await action(t(), a.key, a.number, "pay");
    expectStatus(paid, 200);
    assert.equal(paid.json().status, "paid");
    assert.equal(paid.json().paid_date, "2026-04-06");
    expectStatus(await action(t(), a.key, a.number, "pay"), 200);
    expectStatus(await action(t(), a.key, a.number, "pay", { paid_date: "2026-04-06" }), 200);
    assert.deepEqual(await getInvoice(t(), a.key, a.number), paid.json());
    expectError(await action(t(), a.key, a.number, "pay", { paid_date: "2026-04-05" }), 409, "invoice_is_paid");
    // Finalizing a paid invoice: it was finalized; nothing changes.
    expectStatus(await action(t(), a.key, a.number, "finalize"), 200);
    assert.equal((await getInvoice(t(), a.key, a.number)).status, "paid");

    const b = await issued(t());
    t().clock.advance(3 * 86_400_000);
    const onDate = await action(t(), b.key, b.number, "pay", { paid_date: "2026-04-07" });
    expectStatus(onDate, 200);
    assert.equal(onDate.json().paid_date, "2026-04-07");
  });

  it("refuses a paid_date before the issue date, in the future, or not a date, and leaves the invoice issued", async () => {
    const { key, number } = await issued(t());
    expectError(await action(t(), key, number, "pay", { paid_date: "2026-04-05" }), 400, "paid_date_before_issue");
    expectError(await action(t(), key, number, "pay", { paid_date: "2026-04-07" }), 400, "paid_date_in_future");
    for (const bad of [
      { paid_date: "2026-02-30" },
      { paid_date: "6 April" },
      { paid_date: 20260406 },
      { paid: "2026-04-06" },
      [],
    ]) {
      expectError(await action(t(), key, number, "pay", bad), 400);
    }
    assert.equal((await getInvoice(t(), key, number)).status, "issued");
  });

  it("voids an issued invoice, keeping its lines and figures; voiding again changes nothing", async () => {
    const { key, number } = await issued(t());
    const before = await getInvoice(t(), key, number);
    const voided = await action(t(), key, number, "void");
    expectStatus(voided, 200);
    assert.equal(voided.json().status, "void");
    assert.deepEqual(voided.json().line_items, before.line_items);
    assert.equal(voided.json().total, before.total);
    expectStatus(await action(t(), key, number, "void"), 200);
    assert.deepEqual(await getInvoice(t(), key, number), voided.json());
  });

  it("refuses each transition its status forbids with 409 invoice_is_<status>, changing nothing", async () => {
    const draft = await companyWithDraft(t());
    expectError(await action(t(), draft.key, draft.number, "pay"), 409, "invoice_is_draft");
    expectError(await action(t(), draft.key, draft.number, "void"), 409, "invoice_is_draft");
    assert.equal((await getInvoice(t(), draft.key, draft.number)).status, "draft");

    const paid = await issued(t());
    expectStatus(await action(t(), paid.key, paid.number, "pay"), 200);
    expectError(await action(t(), paid.key, paid.number, "void"), 409, "invoice_is_paid");

    const voided = await issued(t());
    expectStatus(await action(t(), voided.key, voided.number, "void"), 200);
    const body = expectError(await action(t(), voided.key, voided.number, "pay"), 409, "invoice_is_void");
    assert.match(body.error, /void/);
    expectError(await action(t(), voided.key, voided.number, "finalize"), 409, "invoice_is_void");
    assert.equal((await getInvoice(t(), voided.key, voided.number)).status, "void");
  });

  it("answers 404 for an unknown number and for another company's invoice, 401 without a key, 403 without invoices:write", async () => {
    const mine = await companyWithDraft(t());
    const other = await t().newCompany();
    for (const verb of ["finalize", "pay", "void"] as const) {
      expectError(await action(t(), other.key, mine.number, verb), 404, "not_found");
      expectError(await action(t(), mine.key, "INV-999999", verb), 404, "not_found");
      expectError(await t().call({ method: "POST", url: `${INVOICES}/${mine.number}/${verb}` }), 401);
    }
    for (const path of ["finalize", "pay", "void", "pdf", "usage.csv"]) {
      const method = path.includes(".") || path === "pdf" ? "GET" : "POST";
      expectError(
        await t().call({ method, url: `${INVOICES}/${"X".repeat(65)}/${path}`, key: mine.key }),
        400,
        "invalid_request",
      );
    }
    const reader = await keyWithScopes(t(), mine.companyId, ["invoices:read"]);
    expectError(await action(t(), reader, mine.number, "finalize"), 403);
    assert.equal((await getInvoice(t(), mine.key, mine.number)).status, "draft");
  });

  it("refuses late usage per event with period_closed, stores it nowhere and leaves the issued invoice as it was", async () => {
    const { key, contract, number } = await issued(t());
    const before = await getInvoice(t(), key, number);
    const late = usageEvent(contract.id);
    const april = usageEvent(contract.id, { timestamp: "2026-04-02T08:00:00.000Z" });
    const result = await submit(t(), key, [late, april]);
    assert.equal(result.events[0]!.status, "rejected");
    assert.equal(result.events[0]!.error?.code, "period_closed");
    assert.match(result.events[0]!.error!.message, /2026-03/);
    assert.equal(result.events[1]!.status, "accepted", "another month's event of the same request is stored");
    expectError(await t().call({ method: "GET", url: `${USAGE}/${late.event_id}`, key }), 404);
    assert.deepEqual(await getInvoice(t(), key, number), before);
    assert.equal(
      (await invoiceFor(t(), key, contract.id, "2026-04-01")).line_items.length,
      1,
      "April has its own draft",
    );
    expectError(
      await t().call({
        method: "POST",
        url: `${INVOICES}/project`,
        key,
        payload: {
          external_contract_id: contract.id,
          billing_period_start: "2026-03-01",
          billing_period_end: "2026-03-31",
        },
      }),
      409,
      "invoice_is_issued",
    );
    assert.deepEqual(await getInvoice(t(), key, number), before, "projection left it as it was");
  });

  it("refuses late usage on the capped-rule path too, and still answers a stored event's copy as a duplicate", async () => {
    t().clock.set(MARCH_1);
    const { key } = await t().newCompany();
    const customer = await createCustomer(t(), key, { name: "Capped Ltd" });
    const contract: Contract = await createSampleContract(t(), key, customer.id);
    await addRule(t(), key, contract.id, { type: "usage", metric: "card", rate: "0.1", monthly_cap: "5.00" });
    const stored = usageEvent(contract.id, { metric: "card", quantity: 10 });
    await submitAccepted(t(), key, [stored]);
    const { number } = await invoiceFor(t(), key, contract.id);
    t().clock.set(TODAY);
    expectStatus(await action(t(), key, number, "finalize"), 200);
    const before = await getInvoice(t(), key, number);
    const result = await submit(t(), key, [{ ...stored }, usageEvent(contract.id, { metric: "card", quantity: 10 })]);
    assert.deepEqual(
      result.events.map((e) => [e.status, e.duplicate ?? null, e.error?.code ?? null]),
      [
        ["accepted", true, null],
        ["rejected", null, "period_closed"],
      ],
    );
    assert.deepEqual(await getInvoice(t(), key, number), before);
  });

  it("lets exactly one of concurrent pay and void win; concurrent finalizes all answer the one issued invoice", async () => {
    const draft = await companyWithDraft(t());
    const finalizes = await Promise.all(
      Array.from({ length: 6 }, () => action(t(), draft.key, draft.number, "finalize")),
    );
    for (const res of finalizes) expectStatus(res, 200);
    assert.equal(new Set(finalizes.map((r) => r.body)).size, 1, "every answer is the same issued invoice");

    const raced = await Promise.all([
      action(t(), draft.key, draft.number, "pay"),
      action(t(), draft.key, draft.number, "void"),
      action(t(), draft.key, draft.number, "pay"),
      action(t(), draft.key, draft.number, "void"),
    ]);
    const final = (await getInvoice(t(), draft.key, draft.number)).status;
    assert.ok(final === "paid" || final === "void", final);
    const winners = raced.filter((r) => r.statusCode === 200);
    const losers = raced.filter((r) => r.statusCode !== 200);
    assert.equal(winners.length, 2, "the winning action, and its repeat answered unchanged");
    assert.equal(losers.length, 2);
    for (const res of losers) expectError(res, 409, `invoice_is_${final}`);
    for (const res of winners) assert.equal(res.json().status, final);
  });

  it("issues exactly the events stored before it, when usage races the finalization", async () => {
    const { key, companyId, contract, number } = await companyWithDraft(t());
    const batches = Array.from({ length: 8 }, (_, i) =>
      Array.from({ length: 25 }, () => usageEvent(contract.id, { event_id: newEventId(`race${i}`) })),
    );
    const [results, finalized] = await Promise.all([
      Promise.all(batches.map((events) => t().call({ method: "POST", url: USAGE, key, payload: { events } }))),
      action(t(), key, number, "finalize"),
    ]);
    expectStatus(finalized, 200);
    let accepted = 0;
    for (const res of results) {
      expectStatus(res, 200);
      for (const e of res.json().events as { status: string; error?: { code: string } }[]) {
        if (e.status === "accepted") accepted += 1;
        else assert.equal(e.error?.code, "period_closed");
      }
    }
    // Every accepted event is on the issued invoice, which bills them all; nothing came after.
    const invoice = await getInvoice(t(), key, number);
    const domestic = invoice.line_items.find((l) => l.description === "Domestic wire")!;
    assert.equal(domestic.quantity, 3 + accepted);
    const report = await t().app.services.invariants.verify(companyId);
    assert.deepEqual(report.problems, []);
    const { rows } = await forCompany(t().app.db, companyId).query<{ n: string }>(
      "SELECT count(*)::text AS n FROM usage_events WHERE company_id = $1 AND invoice_number = $2",
      [number],
    );
    assert.equal(Number(rows[0]!.n), 2 + accepted, "the draft's two events and every accepted one");
  });

  it("issues the lines a writer stored while the finalization waited for the draft's lock", {
    skip: engine === "pglite" ? "PGlite has one connection: nothing else can hold a lock meanwhile" : false,
  }, async () => {
    const { key, companyId, number } = await companyWithDraft(t());
    const db = t().app.db;
    let release!: () => void;
    let held!: () => void;
    const holding = new Promise<void>((resolve) => (held = resolve));
    // A writer (as ingestion does) holds the draft's lock and adds a unit to its domestic wire line.
    const writer = db.transaction(async (tx) => {
      const scope = forCompany(tx, companyId);
      await scope.query("SELECT 1 FROM invoices WHERE company_id = $1 AND number = $2 FOR UPDATE", [number]);
      await scope.query(
        `UPDATE invoice_lines SET quantity = quantity + 1, charge_total = charge_total + rate
          WHERE company_id = $1 AND invoice_number = $2 AND kind = 'usage' AND metric = 'domestic_wire'`,
        [number],
      );
      held();
      await new Promise<void>((resolve) => (release = resolve));
    });
    await holding;
    const finalizing = action(t(), key, number, "finalize");
    try {
      for (let waiting = 0; waiting === 0; ) {
        const { rows } = await db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'",
        );
        waiting = rows[0]!.n;
      }
    } finally {
      release();
      await writer;
    }
    const res = await finalizing;
    expectStatus(res, 200);
    const domestic = res.json().line_items.find((l: { description: string }) => l.description === "Domestic wire");
    assert.equal(domestic.quantity, 4, "the three units of the draft and the one written under the lock");
    assert.deepEqual(res.json(), await getInvoice(t(), key, number), "the answer is the invoice as stored");
  });

  it("refuses events whose draft was issued while their write waited for the invoice's lock", async () => {
    const { key, companyId, contract, number } = await companyWithDraft(t());
    // Another process finalizes the draft and stops after issuing it, before it commits.
    let paused!: () => void;
    const issuing = new Promise<void>((resolve) => (paused = resolve));
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const base = t().app.db;
    const db: Database = {
      engine: base.engine,
      query: (sql, params) => base.query(sql, params),
      ping: () => base.ping(),
      close: async () => {},
      transaction: (work) =>
        base.transaction((tx) =>
          work({
            query: async <Row>(sql: string, params?: readonly unknown[]) => {
              const result = await tx.query<Row>(sql, params);
              if (sql.includes("SET status = 'issued'")) {
                paused();
                await gate;
              }
              return result;
            },
          }),
        ),
    };
    const other = await createApp(testConfig(), { db, clock: t().clock });
    try {
      const finalizing = other.http.inject({
        method: "POST",
        url: `${INVOICES}/${number}/finalize`,
        headers: { authorization: `Bearer ${key}` },
      });
      await issuing;
      const late = usageEvent(contract.id);
      const submitting = submit(t(), key, [late]);
      if (engine === "postgres") {
        // The write found the draft (step 2 of the ingest function) and now waits for its row lock (step 4).
        await waitFor("the usage write waiting for the invoice's lock", async () => {
          const { rows } = await base.query<{ n: string }>(
            "SELECT count(*)::text AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%billing_ingest_usage_lines%'",
          );
          return rows[0]!.n !== "0";
        });
      } // PGlite has one connection: the write simply queues behind the finalization.
      release();
      expectStatus(await finalizing, 200);
      const result = await submitting;
      assert.equal(result.events[0]!.error?.code, "period_closed", JSON.stringify(result.events[0]));
      expectError(await t().call({ method: "GET", url: `${USAGE}/${late.event_id}`, key }), 404);
      assert.deepEqual((await t().app.services.invariants.verify(companyId)).problems, []);
    } finally {
      release();
      await other.close();
    }
  });

  it("lets billing verify find an issued invoice whose lines changed after it was issued", async () => {
    const { key, companyId, number } = await issued(t());
    assert.deepEqual((await t().app.services.invariants.verify(companyId)).problems, []);
    await forCompany(t().app.db, companyId).query(
      "UPDATE invoice_lines SET charge_total = charge_total + 5 WHERE company_id = $1 AND invoice_number = $2 AND metric = 'international_wire'",
      [number],
    );
    const problems = (await t().app.services.invariants.verify(companyId)).problems.join("\n");
    assert.match(problems, new RegExp(`invoice ${number}: issued with .* but its lines bill`));
    // The customer still sees what was issued.
    assert.equal((await getInvoice(t(), key, number)).total, 1000);
    await forCompany(t().app.db, companyId).query(
      "UPDATE usage_events SET ingested_at = now() + interval '1 day' WHERE company_id = $1",
      [],
    );
    assert.match((await t().app.services.invariants.verify(companyId)).problems.join("\n"), /after it was issued/);
  });

  it("keeps projection and usage of an open month working beside an issued one", async () => {
    const { key, contract } = await issued(t());
    await submitAccepted(t(), key, [usageEvent(contract.id, { timestamp: "2026-04-03T00:00:00.000Z" })]);
    const april = await project(t(), key, contract.id, "2026-04-01", "2026-04-30");
    assert.equal(april.status, "draft");
    assert.equal(april.total, 1000);
  });
});
