import assert from "node:assert/strict";
import { afterEach, it } from "node:test";
import { describeEachEngine } from "../support/harness.js";
import {
  APRIL,
  INVOICES,
  PROJECT,
  addRule,
  anotherContract,
  assertInvoicesMatchEvents,
  companyWithContract,
  getEvent,
  getInvoice,
  invoiceFor,
  invoicesOf,
  keyWithScopes,
  lineNamed,
  minimumWords,
  project,
  submitAccepted,
  sum,
  usageEvent,
  type Invoice,
} from "../support/api.js";
import { assertDecimal, expectError, expectStatus } from "../support/assertions.js";

describeEachEngine("draft invoices", (t) => {
  afterEach(() => t().clock.set(new Date("2026-03-15T12:00:00.000Z")));

  it("puts a contract's usage of a calendar month on one draft invoice of that month", async () => {
    const { key, contract } = await companyWithContract(t());
    const events = [
      usageEvent(contract.id, { quantity: 2 }),
      usageEvent(contract.id, { metric: "international_wire" }),
    ];
    await submitAccepted(t(), key, [events[0]]);
    await submitAccepted(t(), key, [events[1]]);
    const numbers = new Set(
      await Promise.all(events.map(async (e) => (await getEvent(t(), key, e.event_id as string)).invoice_number)),
    );
    assert.equal(numbers.size, 1, "both events are on one invoice");
    const list = await invoicesOf(t(), key, contract.id);
    assert.equal(list.length, 1);
    const invoice = await getInvoice(t(), key, [...numbers][0]!);
    assert.equal(invoice.object, "invoice");
    assert.match(invoice.number, /^INV-\d{6}$/);
    assert.equal(invoice.contract, contract.id);
    assert.equal(invoice.status, "draft");
    assert.equal(invoice.currency, "USD");
    assert.deepEqual(invoice.billing_period, { start: "2026-03-01", end: "2026-03-31" });
    assert.deepEqual(invoice.metrics, ["domestic_wire", "international_wire"]);
    assert.equal(invoice.paid_date, null);
    assert.match(invoice.issued_date, /^\d{4}-\d{2}-\d{2}$/);
    assert.match(invoice.due_date, /^\d{4}-\d{2}-\d{2}$/);
    assert.ok(invoice.due_date >= invoice.issued_date);
    assert.deepEqual(
      invoice.line_items.map((l) => [l.description, l.quantity, l.unit_price, l.amount]),
      [
        ["Domestic wire", 2, 20, 40],
        ["International wire", 1, 30, 30],
      ],
    );
    assert.equal(invoice.subtotal, 70);
    assert.equal(invoice.tax, 0);
    assert.equal(invoice.total, 70);
  });

  it("splits usage into invoices by the UTC month of each event's timestamp", async () => {
    const { key, contract } = await companyWithContract(t());
    // April, so that April's events are not refused as timestamp_in_future.
    t().clock.set(new Date("2026-04-15T12:00:00.000Z"));
    const lastMarch = usageEvent(contract.id, { timestamp: "2026-03-31T23:59:59.999Z" });
    const firstApril = usageEvent(contract.id, { timestamp: "2026-04-01T00:00:00.000Z" });
    const aprilLocalMarchUtc = usageEvent(contract.id, { timestamp: "2026-04-01T01:00:00+02:00" });
    const marchLocalAprilUtc = usageEvent(contract.id, { timestamp: "2026-03-31T22:00:00-03:00" });
    await submitAccepted(t(), key, [lastMarch, firstApril, aprilLocalMarchUtc, marchLocalAprilUtc]);
    const periodOf = async (e: Record<string, unknown>) =>
      (await getEvent(t(), key, e.event_id as string)).service_period_start;
    assert.equal(await periodOf(lastMarch), "2026-03-01");
    assert.equal(await periodOf(firstApril), "2026-04-01");
    assert.equal(await periodOf(aprilLocalMarchUtc), "2026-03-01");
    assert.equal(await periodOf(marchLocalAprilUtc), "2026-04-01");
    const invoices = await invoicesOf(t(), key, contract.id);
    assert.deepEqual(invoices.map((i) => [i.billing_period.start, i.billing_period.end]).sort(), [
      ["2026-03-01", "2026-03-31"],
      ["2026-04-01", "2026-04-30"],
    ]);
    for (const invoice of invoices) assert.equal(invoice.total, 40);
    await assertInvoicesMatchEvents(t(), key, contract.id);
  });

  it("rounds each line half-even to cents from the exact sum of its charges, losing no penny", async () => {
    const { key, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { id: "tiny", metric: "tiny", rate: "0.001" });
    await addRule(t(), key, contract.id, { id: "half", metric: "half", rate: "0.001" });
    await addRule(t(), key, contract.id, { id: "odd", metric: "odd", rate: "0.001" });
    await submitAccepted(t(), key, [
      // three charges of 0.004: each would round to 0.00, their sum 0.012 rounds to 0.01
      usageEvent(contract.id, { metric: "tiny", quantity: 4 }),
      usageEvent(contract.id, { metric: "tiny", quantity: 4 }),
      usageEvent(contract.id, { metric: "tiny", quantity: 4 }),
      // 0.125 is a half: half-even gives 0.12 (half-up would give 0.13)
      usageEvent(contract.id, { metric: "half", quantity: 125 }),
      // 0.135 is a half too: half-even gives 0.14
      usageEvent(contract.id, { metric: "odd", quantity: 135 }),
    ]);
    const invoice = await invoiceFor(t(), key, contract.id);
    assert.equal(lineNamed(invoice, "tiny usage").amount, 0.01);
    assert.equal(lineNamed(invoice, "half usage").amount, 0.12);
    assert.equal(lineNamed(invoice, "odd usage").amount, 0.14);
    assertDecimal(invoice.total, "0.27");
    await assertInvoicesMatchEvents(t(), key, contract.id);
  });

  it("keeps each invoice's total equal to the sum of its lines and each line equal to its events, across a busy month", async () => {
    const { key, contract } = await companyWithContract(t());
    // April, so that April's events are not refused as timestamp_in_future.
    t().clock.set(new Date("2026-04-15T12:00:00.000Z"));
    await addRule(t(), key, contract.id, { metric: "card_volume", rate: 0.0275 });
    await addRule(t(), key, contract.id, { metric: "usd_transaction_volume_processed", rate: 0 });
    await addRule(t(), key, contract.id, { metric: "api_call", amount: "0.003", monthly_cap: "0.05" });
    const events = [];
    for (let i = 0; i < 40; i++) {
      const timestamp = i % 3 === 0 ? APRIL : `2026-03-${String(15 + (i % 16)).padStart(2, "0")}T0${i % 10}:00:00Z`;
      events.push(
        usageEvent(contract.id, { metric: "card_volume", quantity: `${(i * 37.13).toFixed(2)}`, timestamp }),
        usageEvent(contract.id, {
          metric: "usd_transaction_volume_processed",
          quantity: 100 + i,
          fee_amount: `${(i * 0.333).toFixed(3)}`,
          timestamp,
        }),
        usageEvent(contract.id, { metric: "api_call", quantity: i + 1, timestamp }),
        usageEvent(contract.id, { quantity: i % 4, applied_rate: i % 2 === 0 ? 17.5 : undefined, timestamp }),
      );
    }
    const clean = events.map((e) => Object.fromEntries(Object.entries(e).filter(([, v]) => v !== undefined)));
    for (let i = 0; i < clean.length; i += 50) await submitAccepted(t(), key, clean.slice(i, i + 50));
    const invoices = await assertInvoicesMatchEvents(t(), key, contract.id);
    assert.equal(invoices.length, 2);
    for (const invoice of invoices) {
      assertDecimal(
        sum(invoice.line_items.filter((l) => l.metric === "api_call" && l.kind === "usage").map((l) => l.amount)),
        "0.05",
        "the cap holds",
      );
    }
  });

  it("gets an invoice with its line items, and 404 Not found for an unknown number", async () => {
    const { key, contract } = await companyWithContract(t());
    await submitAccepted(t(), key, [usageEvent(contract.id)]);
    const [summary] = await invoicesOf(t(), key, contract.id);
    const invoice = await getInvoice(t(), key, summary!.number);
    const { line_items: lines, payments, ...rest } = invoice as typeof invoice & { payments: unknown[] };
    assert.deepEqual(rest, summary, "get shows what the list shows, plus the lines and payments");
    assert.deepEqual(payments, []);
    assert.equal(lines.length, 1);
    assert.equal("line_items" in summary!, false, "the list has no line items");
    for (const number of ["INV-999999", "nope"]) {
      assert.equal(
        expectError(await t().call({ method: "GET", url: `${INVOICES}/${number}`, key }), 404).error,
        "Not found",
      );
    }
  });
});

describeEachEngine("listing invoices", (t) => {
  afterEach(() => t().clock.set(new Date("2026-03-15T12:00:00.000Z")));

  /** A company with invoices INV-000001.. made in a known order: c1 March, c2 March, c1 April, c2 May (projected). */
  async function seeded() {
    const { key, companyId, contract: c1 } = await companyWithContract(t());
    const c2 = await anotherContract(t(), key);
    // April, so that c1's April event is not refused as timestamp_in_future.
    t().clock.set(new Date("2026-04-15T12:00:00.000Z"));
    await submitAccepted(t(), key, [usageEvent(c1.id)]);
    await submitAccepted(t(), key, [usageEvent(c2.id)]);
    await submitAccepted(t(), key, [usageEvent(c1.id, { timestamp: APRIL })]);
    await project(t(), key, c2.id, "2026-05-01", "2026-05-31");
    return { key, companyId, c1, c2 };
  }

  const list = async (
    key: string,
    query: string,
  ): Promise<{ data: Invoice[]; has_more: boolean; total_count: number; object: string }> => {
    const res = await t().call({ method: "GET", url: `${INVOICES}${query ? `?${query}` : ""}`, key });
    expectStatus(res, 200);
    return res.json();
  };

  it("lists invoices newest first with INV-000001 style numbers that grow with creation", async () => {
    const { key, c1, c2 } = await seeded();
    const body = await list(key, "");
    assert.equal(body.object, "list");
    assert.equal(body.has_more, false);
    assert.equal(body.total_count, 4);
    assert.deepEqual(
      body.data.map((i) => [i.number, i.contract, i.billing_period.start]),
      [
        ["INV-000004", c2.id, "2026-05-01"],
        ["INV-000003", c1.id, "2026-04-01"],
        ["INV-000002", c2.id, "2026-03-01"],
        ["INV-000001", c1.id, "2026-03-01"],
      ],
    );
  });

  it("numbers each company's invoices on its own", async () => {
    const a = await companyWithContract(t());
    const b = await companyWithContract(t());
    await submitAccepted(t(), a.key, [usageEvent(a.contract.id)]);
    await submitAccepted(t(), b.key, [usageEvent(b.contract.id)]);
    assert.equal((await invoicesOf(t(), a.key, a.contract.id))[0]!.number, "INV-000001");
    assert.equal((await invoicesOf(t(), b.key, b.contract.id))[0]!.number, "INV-000001");
  });

  it("filters invoices by contract, status and billing period", async () => {
    const { key, c1, c2 } = await seeded();
    const numbers = async (query: string) => (await list(key, query)).data.map((i) => i.number);
    assert.deepEqual(await numbers(`contract=${c1.id}`), ["INV-000003", "INV-000001"]);
    assert.deepEqual(await numbers(`contract=${c2.id}`), ["INV-000004", "INV-000002"]);
    assert.deepEqual(await numbers("contract=no-such-contract"), []);
    assert.deepEqual(await numbers("status=draft"), ["INV-000004", "INV-000003", "INV-000002", "INV-000001"]);
    assert.deepEqual(await numbers("status=paid"), []);
    assert.deepEqual(await numbers("from=2026-04-01"), ["INV-000004", "INV-000003"]);
    assert.deepEqual(await numbers("from=2026-03-02"), ["INV-000004", "INV-000003"]);
    assert.deepEqual(await numbers("to=2026-03-31"), ["INV-000002", "INV-000001"]);
    assert.deepEqual(await numbers("to=2026-04-29"), ["INV-000002", "INV-000001"]);
    assert.deepEqual(await numbers("from=2026-04-01&to=2026-04-30"), ["INV-000003"]);
    assert.deepEqual(await numbers(`from=2026-03-01&to=2026-04-30&contract=${c2.id}`), ["INV-000002"]);
    for (const bad of ["from=March", "to=2026-13-01", "limit=0", "limit=101"]) {
      expectError(await t().call({ method: "GET", url: `${INVOICES}?${bad}`, key }), 400);
    }
  });

  it("pages through invoices with starting_after set to the last number", async () => {
    const { key } = await seeded();
    const first = await list(key, "limit=3");
    assert.deepEqual(
      first.data.map((i) => i.number),
      ["INV-000004", "INV-000003", "INV-000002"],
    );
    assert.equal(first.has_more, true);
    assert.equal(first.total_count, 3);
    const second = await list(key, `limit=3&starting_after=${first.data.at(-1)!.number}`);
    assert.deepEqual(
      second.data.map((i) => i.number),
      ["INV-000001"],
    );
    assert.equal(second.has_more, false);
    const filtered = await list(key, "limit=1&starting_after=INV-000004&status=draft");
    assert.deepEqual(
      filtered.data.map((i) => i.number),
      ["INV-000003"],
    );
  });

  it("answers 400 invalid_cursor for an unknown cursor and for another company's invoice number", async () => {
    const { key } = await seeded();
    expectError(
      await t().call({ method: "GET", url: `${INVOICES}?starting_after=INV-999999`, key }),
      400,
      "invalid_cursor",
    );
    const other = await t().newCompany();
    expectError(
      await t().call({ method: "GET", url: `${INVOICES}?starting_after=INV-000001`, key: other.key }),
      400,
      "invalid_cursor",
    );
  });
});

describeEachEngine("invoice projection", (t) => {
  it("creates the draft on the first projection (is_new true) with the monthly minimum, and finds it after (is_new false)", async () => {
    const { key, contract } = await companyWithContract(t());
    const first = await project(t(), key, contract.id);
    assert.equal(first.object, "invoice");
    assert.equal(first.is_new, true);
    assert.equal(first.contract, contract.id);
    assert.equal(first.status, "draft");
    assert.equal(first.currency, "USD");
    assert.deepEqual(first.billing_period, { start: "2026-03-01", end: "2026-03-31" });
    assert.equal(first.total, 1000);
    const second = await project(t(), key, contract.id);
    assert.equal(second.is_new, false);
    assert.equal(second.number, first.number);
    assert.equal(second.total, 1000);
    const invoice = await getInvoice(t(), key, first.number);
    assert.deepEqual(
      invoice.line_items.map((l) => [l.description, l.quantity, l.unit_price, l.amount]),
      [[minimumWords("1,000.00", "0.00"), 1, 1000, 1000]],
    );
  });

  it("tops a sample contract with little usage up to exactly 1000: 40 of wires plus a 960 minimum line", async () => {
    const { key, contract } = await companyWithContract(t());
    await submitAccepted(t(), key, [
      usageEvent(contract.id, { quantity: 1 }),
      usageEvent(contract.id, { quantity: 1 }),
    ]);
    const projection = await project(t(), key, contract.id);
    assert.equal(projection.is_new, false, "the usage made the draft already");
    assert.equal(projection.total, 1000);
    assert.equal(projection.subtotal, 1000);
    assert.equal(projection.tax, 0);
    const invoice = await getInvoice(t(), key, projection.number);
    assert.deepEqual(
      invoice.line_items.map((l) => [l.description, l.amount]),
      [
        ["Domestic wire", 40],
        [minimumWords("1,000.00", "40.00"), 960],
      ],
    );
    assert.equal(invoice.total, 1000);
    await assertInvoicesMatchEvents(t(), key, contract.id);
  });

  it("changes nothing when the same period is projected again", async () => {
    const { key, contract } = await companyWithContract(t());
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 2 })]);
    const first = await project(t(), key, contract.id);
    const before = await getInvoice(t(), key, first.number);
    for (let i = 0; i < 3; i++) {
      const again = await project(t(), key, contract.id);
      assert.equal(again.number, first.number);
      assert.equal(again.total, first.total);
      assert.equal(again.is_new, false);
    }
    assert.deepEqual(await getInvoice(t(), key, first.number), before);
    assert.equal((await invoicesOf(t(), key, contract.id)).length, 1);
  });

  it("keeps the true-up equal to the shortfall as later usage arrives, and drops it once usage passes the minimum", async () => {
    const { key, contract } = await companyWithContract(t());
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 2 })]);
    const projection = await project(t(), key, contract.id);
    await submitAccepted(t(), key, [usageEvent(contract.id, { metric: "international_wire", quantity: 3 })]);
    let invoice = await getInvoice(t(), key, projection.number);
    assert.deepEqual(
      invoice.line_items.map((l) => [l.description, l.amount]),
      [
        ["Domestic wire", 40],
        ["International wire", 90],
        [minimumWords("1,000.00", "130.00"), 870],
      ],
    );
    assert.equal(invoice.total, 1000);
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 48 })]); // +960: usage 1090
    invoice = await getInvoice(t(), key, projection.number);
    assert.deepEqual(
      invoice.line_items.map((l) => [l.description, l.amount]),
      [
        ["Domestic wire", 1000],
        ["International wire", 90],
      ],
    );
    assert.equal(invoice.total, 1090);
    const again = await project(t(), key, contract.id);
    assert.equal(again.total, 1090, "projecting again adds no minimum once usage covers it");
    await assertInvoicesMatchEvents(t(), key, contract.id);
  });

  it("tops up to exactly the minimum when usage ends in fractions of a cent", async () => {
    const { key, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { metric: "card_volume", rate: "0.0123" });
    await submitAccepted(t(), key, [usageEvent(contract.id, { metric: "card_volume", quantity: "1234.567" })]); // 15.1851741
    const projection = await project(t(), key, contract.id);
    assert.equal(projection.total, 1000);
    const invoice = await getInvoice(t(), key, projection.number);
    assert.equal(lineNamed(invoice, "card_volume usage").amount, 15.19);
    assertDecimal(lineNamed(invoice, minimumWords("1,000.00", "15.19")).amount, "984.81");
  });

  it("bills a subscription rule plus usage without a minimum line when they exceed the minimum", async () => {
    const { key, contract } = await companyWithContract(t());
    const subscription = await addRule(t(), key, contract.id, { type: "subscription", amount: "1500.00" });
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 2 })]);
    const projection = await project(t(), key, contract.id);
    assert.equal(projection.total, 1540);
    const invoice = await getInvoice(t(), key, projection.number);
    const sub = invoice.line_items.find((l) => l.kind === "subscription")!;
    assert.equal(sub.rule_id, subscription.rule.id);
    assert.equal(sub.amount, 1500);
    assert.equal(sub.quantity, 1);
    assert.equal(sub.unit_price, 1500);
    assert.equal(lineNamed(invoice, "Domestic wire").amount, 40);
    assert.equal(invoice.line_items.filter((l) => l.kind === "minimum").length, 0);
    assert.equal(invoice.line_items.length, 2);
    assert.equal((await project(t(), key, contract.id)).total, 1540, "the subscription is billed once per month");
  });

  it("counts a small subscription toward the minimum", async () => {
    const { key, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { type: "subscription", name: "Platform fee", amount: "300.00" });
    const projection = await project(t(), key, contract.id);
    const invoice = await getInvoice(t(), key, projection.number);
    assert.deepEqual(
      invoice.line_items.map((l) => [l.description, l.amount]),
      [
        ["Platform fee", 300],
        [minimumWords("1,000.00", "300.00"), 700],
      ],
    );
  });

  it("bills a one-time fee on the first projected month only", async () => {
    const { key, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { type: "one_time", name: "Setup fee", amount: "250.00" });
    const march = await project(t(), key, contract.id);
    const april = await project(t(), key, contract.id, "2026-04-01", "2026-04-30");
    assert.deepEqual(
      (await getInvoice(t(), key, march.number)).line_items.map((l) => [l.description, l.amount]),
      [
        ["Setup fee", 250],
        [minimumWords("1,000.00", "0.00"), 1000],
      ],
    );
    assert.deepEqual(
      (await getInvoice(t(), key, april.number)).line_items.map((l) => [l.description, l.amount]),
      [[minimumWords("1,000.00", "0.00"), 1000]],
    );
    assert.equal((await project(t(), key, contract.id)).total, 1250, "projecting March again keeps its one-time fee");
  });

  it("creates one draft when ten first projections of a month race, and only one of them says is_new", async () => {
    const { key, contract } = await companyWithContract(t());
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        t().call({
          method: "POST",
          url: PROJECT,
          key,
          payload: {
            external_contract_id: contract.id,
            billing_period_start: "2026-03-01",
            billing_period_end: "2026-03-31",
          },
        }),
      ),
    );
    for (const res of responses) expectStatus(res, 200);
    const bodies = responses.map((r) => r.json());
    assert.equal(bodies.filter((b) => b.is_new === true).length, 1);
    assert.equal(new Set(bodies.map((b) => b.number)).size, 1);
    for (const body of bodies) assert.equal(body.total, 1000);
    assert.equal((await invoicesOf(t(), key, contract.id)).length, 1);
  });

  it("refuses a period that is not exactly one calendar month with 400 invalid_billing_period", async () => {
    const { key, contract } = await companyWithContract(t());
    for (const [start, end] of [
      ["2026-03-01", "2026-03-30"],
      ["2026-03-02", "2026-03-31"],
      ["2026-03-15", "2026-04-14"],
      ["2026-03-01", "2026-04-30"],
      ["2026-03-31", "2026-03-01"],
      ["2026-04-01", "2026-04-31"],
    ]) {
      const res = await t().call({
        method: "POST",
        url: PROJECT,
        key,
        payload: { external_contract_id: contract.id, billing_period_start: start, billing_period_end: end },
      });
      expectError(res, 400);
      if (!["2026-04-31"].includes(end!)) assert.equal(res.json().code, "invalid_billing_period", `${start}..${end}`);
    }
    assert.deepEqual(await invoicesOf(t(), key, contract.id), []);
  });

  it("refuses a malformed projection body with 400", async () => {
    const { key, contract } = await companyWithContract(t());
    for (const payload of [
      {},
      { external_contract_id: contract.id },
      { external_contract_id: contract.id, billing_period_start: "March", billing_period_end: "2026-03-31" },
      {
        external_contract_id: contract.id,
        billing_period_start: "2026-03-01",
        billing_period_end: "2026-03-31",
        extra: 1,
      },
    ]) {
      expectError(await t().call({ method: "POST", url: PROJECT, key, payload }), 400);
    }
  });

  it("answers 404 when projecting an unknown contract or another company's contract", async () => {
    const a = await companyWithContract(t());
    const b = await t().newCompany();
    for (const [key, contractId] of [
      [a.key, "no-such-contract"],
      [b.key, a.contract.id],
    ] as const) {
      const res = await t().call({
        method: "POST",
        url: PROJECT,
        key,
        payload: {
          external_contract_id: contractId,
          billing_period_start: "2026-03-01",
          billing_period_end: "2026-03-31",
        },
      });
      expectError(res, 404);
    }
    assert.deepEqual(await invoicesOf(t(), a.key, a.contract.id), []);
  });

  it("refuses to project a month wholly outside the contract term", async () => {
    const { key, contract } = await companyWithContract(t());
    const res = await t().call({
      method: "POST",
      url: PROJECT,
      key,
      payload: {
        external_contract_id: contract.id,
        billing_period_start: "2026-02-01",
        billing_period_end: "2026-02-28",
      },
    });
    expectError(res, 400, "outside_contract_term");
  });
});

describeEachEngine("invoice isolation and access", (t) => {
  it("hides company A's invoices from company B: 404 by number, absent from B's list", async () => {
    const a = await companyWithContract(t());
    const b = await companyWithContract(t());
    await submitAccepted(t(), a.key, [usageEvent(a.contract.id)]);
    const [aInvoice] = await invoicesOf(t(), a.key, a.contract.id);
    const before = await getInvoice(t(), a.key, aInvoice!.number);
    // B has no invoice with that number yet.
    assert.equal(
      expectError(await t().call({ method: "GET", url: `${INVOICES}/${aInvoice!.number}`, key: b.key }), 404).error,
      "Not found",
    );
    const bList = await t().call({ method: "GET", url: INVOICES, key: b.key });
    assert.deepEqual(bList.json().data, []);
    const bFiltered = await t().call({ method: "GET", url: `${INVOICES}?contract=${a.contract.id}`, key: b.key });
    assert.deepEqual(bFiltered.json().data, []);
    // Once B has its own INV-000001, the number shows B's invoice, never A's.
    await submitAccepted(t(), b.key, [usageEvent(b.contract.id, { quantity: 5 })]);
    const bInvoice = await getInvoice(t(), b.key, aInvoice!.number);
    assert.equal(bInvoice.contract, b.contract.id);
    assert.equal(bInvoice.total, 100);
    assert.deepEqual(await getInvoice(t(), a.key, aInvoice!.number), before);
  });

  it("answers 401 Missing API key on every invoice endpoint without a key", async () => {
    for (const request of [
      { method: "GET" as const, url: INVOICES },
      { method: "GET" as const, url: `${INVOICES}/INV-000001` },
      {
        method: "POST" as const,
        url: PROJECT,
        payload: { external_contract_id: "x", billing_period_start: "2026-03-01", billing_period_end: "2026-03-31" },
      },
    ]) {
      assert.equal(expectError(await t().call(request), 401).error, "Missing API key");
    }
  });

  it("answers 403 to a key without invoices:read on the invoice list and get", async () => {
    const { companyId, key, contract } = await companyWithContract(t());
    await submitAccepted(t(), key, [usageEvent(contract.id)]);
    const usageOnly = await keyWithScopes(t(), companyId, ["usage:write", "contracts:read"]);
    expectError(await t().call({ method: "GET", url: INVOICES, key: usageOnly }), 403);
    expectError(await t().call({ method: "GET", url: `${INVOICES}/INV-000001`, key: usageOnly }), 403);
    const reader = await keyWithScopes(t(), companyId, ["invoices:read"]);
    expectStatus(await t().call({ method: "GET", url: INVOICES, key: reader }), 200);
    expectStatus(await t().call({ method: "GET", url: `${INVOICES}/INV-000001`, key: reader }), 200);
  });
});
