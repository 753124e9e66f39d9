/**
 * Previewing a pricing program against a month's stored usage (POST /v1/billing/contracts/{id}/pricing/preview):
 * the preview is the invoice the program gives the same events (checked against a copy of the month billed
 * under it), the actual invoice is the month's as it stands, nothing is stored, bad input is refused.
 */
import assert from "node:assert/strict";
import { beforeEach, it } from "node:test";
import { Big } from "../../src/domain/kernel/money.js";
import {
  addRule,
  anotherContract,
  companyWithContract,
  CONTRACTS,
  getPricing,
  INVOICES,
  invoiceFor,
  keyWithScopes,
  project,
  submitAccepted,
  updateRule,
  USAGE,
  usageEvent,
} from "../support/api.js";
import { assertDecimal, expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";

const MID_MARCH = new Date("2026-03-15T12:00:00.000Z");
const MARCH = { billing_period_start: "2026-03-01", billing_period_end: "2026-03-31" };

const previewOf = (t: TestApp, key: string, contractId: string, payload: object) =>
  t.call({ method: "POST", url: `${CONTRACTS}/${encodeURIComponent(contractId)}/pricing/preview`, key, payload });

async function preview(t: TestApp, key: string, contractId: string, payload: object) {
  const res = await previewOf(t, key, contractId, payload);
  expectStatus(res, 200);
  return res.json();
}

/** A program as GET …/pricing answers it, as the preview takes it: every rule without its null fields. */
async function programOf(t: TestApp, key: string, contractId: string) {
  const program = await getPricing(t, key, contractId);
  return program.rules.map((rule: Record<string, unknown>) =>
    Object.fromEntries(Object.entries(rule).filter(([, v]) => v !== null)),
  );
}

/** The month's usage: every model, a cap, fees, rates named by the events, several lines per rule. */
function monthOfUsage(prefix: string, contractId: string) {
  const events: Record<string, unknown>[] = [];
  for (let i = 0; i < 24; i++) {
    const day = String(15 + (i % 14));
    const base = { event_id: `${prefix}-${i}`, timestamp: `2026-03-${day}T0${i % 10}:00:00.000Z` };
    const kind = i % 6;
    if (kind === 0) events.push(usageEvent(contractId, { ...base, quantity: 2 }));
    if (kind === 1) events.push(usageEvent(contractId, { ...base, quantity: 1, fee_amount: `${12 + i}.35` }));
    if (kind === 2) events.push(usageEvent(contractId, { ...base, metric: "api_calls", quantity: 400 + 37 * i }));
    if (kind === 3) events.push(usageEvent(contractId, { ...base, metric: "card_volume", quantity: `${1000 + i}.50` }));
    if (kind === 4)
      events.push(usageEvent(contractId, { ...base, metric: "card_volume", quantity: "250.00", applied_rate: "0.01" }));
    if (kind === 5) events.push(usageEvent(contractId, { ...base, metric: "storage_gb", quantity: 130 + i }));
  }
  return events;
}

/** Sends events in batches of 5, one request after another: the order they are stored in. */
async function sendInBatches(t: TestApp, key: string, events: readonly Record<string, unknown>[]) {
  for (let i = 0; i < events.length; i += 5) await submitAccepted(t, key, events.slice(i, i + 5));
}

/**
 * An invoice's figures as a preview states them: its lines without what GET of one invoice adds from its events
 * (`event_count`, `uncapped_amount`), which a preview of a program does not claim.
 */
const figures = (invoice: { subtotal: number; total: number; line_items: object[] }) => ({
  subtotal: invoice.subtotal,
  total: invoice.total,
  line_items: invoice.line_items.map((line) => {
    const { event_count: _count, uncapped_amount: _uncapped, ...stated } = line as Record<string, unknown>;
    return stated;
  }),
});

describeEachEngine("pricing preview", (t) => {
  beforeEach(() => t().clock.set(MID_MARCH));

  it("equals the invoice the previewed program gives a copy of the month", async () => {
    const { key, contract: actual } = await companyWithContract(t());
    await addRule(t(), key, actual.id, { metric: "api_calls", amount: "0.01" });
    await addRule(t(), key, actual.id, { metric: "card_volume", rate: "0.02" });
    await addRule(t(), key, actual.id, { metric: "storage_gb", amount: "1" });

    // The copy is billed under the program to preview: every model, a cap, a fee per event, a subscription.
    const copy = await anotherContract(t(), key);
    const sample = await getPricing(t(), key, copy.id);
    const wire = sample.rules.find((r: { metric: string | null }) => r.metric === "domestic_wire")!;
    await updateRule(t(), key, copy.id, wire.id, { amount: "25.00", monthly_cap: "120" });
    await addRule(t(), key, copy.id, {
      metric: "api_calls",
      model: "graduated",
      tiers: [
        { up_to: 1000, unit_amount: "0.02" },
        { up_to: 5000, unit_amount: "0.015", flat_amount: "3" },
        { up_to: null, unit_amount: "0.01" },
      ],
      monthly_cap: "90",
    });
    await addRule(t(), key, copy.id, {
      metric: "card_volume",
      rate: "0.029",
      fixed_fee: "0.30",
      min_fee: "0.50",
      max_fee: "40",
    });
    await addRule(t(), key, copy.id, { metric: "storage_gb", model: "package", package_size: 100, amount: "7.50" });
    await addRule(t(), key, copy.id, { type: "subscription", name: "Platform fee", amount: "99.00" });

    await sendInBatches(t(), key, monthOfUsage("a", actual.id));
    await sendInBatches(t(), key, monthOfUsage("b", copy.id));
    const before = await invoiceFor(t(), key, actual.id);

    const answer = await preview(t(), key, actual.id, { rules: await programOf(t(), key, copy.id), ...MARCH });
    await project(t(), key, copy.id);
    const billed = await invoiceFor(t(), key, copy.id);
    assert.deepEqual(figures(answer.preview), figures(billed), "the preview is the copy's invoice");
    assert.equal(answer.preview.number, null);
    assert.equal(answer.events, 24);
    assert.equal(answer.unpriced_events, 0);

    await project(t(), key, actual.id);
    const actualNow = await invoiceFor(t(), key, actual.id);
    assert.deepEqual(
      figures(answer.actual),
      figures(actualNow),
      "actual: the draft as projection brings it up to date",
    );
    assert.equal(answer.actual.number, before.number);
    assert.equal(answer.actual.status, "draft");
    assertDecimal(answer.difference.total, new Big(billed.total).minus(actualNow.total));
    const wires = answer.difference.lines.find(
      (l: { kind: string; description: string }) => l.kind === "usage" && l.description === "Domestic wire",
    );
    assertDecimal(wires.difference, new Big(wires.preview_amount).minus(wires.actual_amount));
    assertDecimal(wires.preview_amount, 120, "capped at 120 under the preview");
  });

  it("with effective_date, equals the draft after saving the same change, line by line and in total", async () => {
    t().clock.set(new Date("2026-03-01T08:00:00.000Z"));
    const { key, contract } = await companyWithContract(t());
    t().clock.set(MID_MARCH);
    await submitAccepted(t(), key, [
      usageEvent(contract.id, { quantity: 3, timestamp: "2026-03-05T10:00:00.000Z" }),
      usageEvent(contract.id, { quantity: 60, timestamp: "2026-03-20T10:00:00.000Z" }),
    ]);
    await project(t(), key, contract.id);
    const rules = await programOf(t(), key, contract.id);
    const wire = rules.find((r: { metric?: string }) => r.metric === "domestic_wire") as { id: string };
    const changed = rules.map((r: Record<string, unknown>) => (r.id === wire.id ? { ...r, amount: "25.00" } : r));
    const previewed = await preview(t(), key, contract.id, { rules: changed, ...MARCH, effective_date: "2026-03-15" });
    await updateRule(t(), key, contract.id, wire.id, { amount: "25.00", effective_date: "2026-03-15" });
    await project(t(), key, contract.id);
    const saved = await invoiceFor(t(), key, contract.id);
    // 3 wires at 20.00 before the day, 60 at 25.00 from it: 1,560.00, above the minimum.
    assert.equal(saved.total, 1560);
    assert.deepEqual(figures(previewed.preview), figures(saved));
    // Without the day, the whole month at 25.00: the preview of the month, not of the change.
    const whole = await preview(t(), key, contract.id, { rules: changed, ...MARCH });
    assert.equal(whole.preview.total, 1575);
    expectError(
      await previewOf(t(), key, contract.id, { rules: changed, ...MARCH, effective_date: "2026-04-01" }),
      400,
      "invalid_request",
    );
  });

  it("takes GET …/pricing back as it answers it, nulls and all: an unchanged program's pricing difference is 0", async () => {
    t().clock.set(new Date("2026-03-01T08:00:00.000Z"));
    const { key, contract } = await companyWithContract(t());
    t().clock.set(MID_MARCH);
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 3, timestamp: "2026-03-05T10:00:00.000Z" })]);
    // A grant made after the month's usage: the credits move, the pricing does not.
    const grant = await t().call({
      method: "POST",
      url: `${CONTRACTS}/${encodeURIComponent(contract.id)}/credits`,
      key,
      payload: { amount: "25", type: "promotional", starts_on: "2026-03-01" },
    });
    expectStatus(grant, 201);
    const program = await getPricing(t(), key, contract.id);
    assert.ok(
      program.rules.some((r: Record<string, unknown>) => Object.values(r).includes(null)),
      "nulls sent back",
    );
    const answer = await preview(t(), key, contract.id, { rules: program.rules, ...MARCH });
    assert.equal(answer.difference.charges, 0);
    assert.equal(answer.difference.credits, 0);
    assert.equal(answer.difference.total, 0);
  });

  it("stores nothing: the draft, its events and the month without an invoice stay as they were", async () => {
    const { key, contract } = await companyWithContract(t());
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 3 })]);
    const draft = await invoiceFor(t(), key, contract.id);
    const events = (await t().call({ method: "GET", url: `${USAGE}?contract=${contract.id}`, key })).json();
    const program = await programOf(t(), key, contract.id);
    program[0]!.amount = "1.00";
    const answer = await preview(t(), key, contract.id, { rules: program, ...MARCH });
    assertDecimal(answer.preview.line_items.find((l: { kind: string }) => l.kind === "usage").amount, 3);
    assert.deepEqual(await invoiceFor(t(), key, contract.id), draft);
    assert.deepEqual((await t().call({ method: "GET", url: `${USAGE}?contract=${contract.id}`, key })).json(), events);

    const april = await preview(t(), key, contract.id, {
      rules: program,
      billing_period_start: "2026-04-01",
      billing_period_end: "2026-04-30",
    });
    assert.equal(april.actual.number, null, "a month without an invoice");
    assert.equal(april.events, 0);
    const invoices = (await t().call({ method: "GET", url: `${INVOICES}?contract=${contract.id}`, key })).json();
    assert.equal(invoices.data.length, 1, "no invoice was created for April");
  });

  it("shows an issued month as issued, and counts events the program cannot price", async () => {
    const { key, contract } = await companyWithContract(t());
    await submitAccepted(t(), key, [
      usageEvent(contract.id, { quantity: 2 }),
      usageEvent(contract.id, { metric: "international_wire" }),
    ]);
    const draft = await invoiceFor(t(), key, contract.id);
    t().clock.set(new Date("2026-04-02T09:00:00.000Z"));
    expectStatus(await t().call({ method: "POST", url: `${INVOICES}/${draft.number}/finalize`, key }), 200);
    const issued = await invoiceFor(t(), key, contract.id);
    const program = (await programOf(t(), key, contract.id)).filter(
      (r: { metric?: string }) => r.metric !== "international_wire",
    );
    const answer = await preview(t(), key, contract.id, { rules: program, ...MARCH });
    assert.deepEqual(figures(answer.actual), figures(issued));
    assert.equal(answer.actual.status, "issued");
    assert.equal(answer.events, 1);
    assert.equal(answer.unpriced_events, 1);
  });

  it("leaves voided events out", async () => {
    const { key, contract } = await companyWithContract(t());
    const gone = usageEvent(contract.id, { quantity: 5 });
    await submitAccepted(t(), key, [gone, usageEvent(contract.id, { quantity: 1 })]);
    expectStatus(await t().call({ method: "POST", url: `${USAGE}/${gone.event_id}/void`, key }), 200);
    const answer = await preview(t(), key, contract.id, { rules: await programOf(t(), key, contract.id), ...MARCH });
    assert.equal(answer.events, 1);
    assert.deepEqual(answer.preview.line_items, answer.actual.line_items);
    assertDecimal(answer.difference.total, 0);
  });

  it("refuses bad programs and months with 400, unknown and other companies' contracts with 404, and checks scopes", async () => {
    const { key, companyId, contract } = await companyWithContract(t());
    const program = await programOf(t(), key, contract.id);
    const bad = await previewOf(t(), key, contract.id, {
      rules: [...program, { metric: "x", model: "graduated", tiers: [] }],
      ...MARCH,
    });
    const body = expectError(bad, 400, "invalid_pricing_rule");
    assert.ok(
      body.details?.some((d) => d.path.startsWith(`rules.${program.length}.`)),
      JSON.stringify(body),
    );
    expectError(
      await previewOf(t(), key, contract.id, { rules: [{ ...program[0] }, { ...program[0] }], ...MARCH }),
      400,
      "invalid_pricing_rule",
    );
    expectError(
      await previewOf(t(), key, contract.id, {
        rules: program,
        billing_period_start: "2026-03-01",
        billing_period_end: "2026-03-30",
      }),
      400,
      "invalid_billing_period",
    );
    expectError(
      await previewOf(t(), key, contract.id, {
        rules: program,
        billing_period_start: "2025-03-01",
        billing_period_end: "2025-03-31",
      }),
      400,
      "outside_contract_term",
    );
    expectError(await previewOf(t(), key, contract.id, { rules: program }), 400);
    expectError(await previewOf(t(), key, contract.id, { rules: program, ...MARCH, extra: true }), 400);
    expectError(await previewOf(t(), key, "no-such-contract", { rules: program, ...MARCH }), 404);
    const other = await companyWithContract(t());
    expectError(await previewOf(t(), other.key, contract.id, { rules: program, ...MARCH }), 404);
    const usageOnly = await keyWithScopes(t(), companyId, ["usage:write"]);
    expectError(await previewOf(t(), usageOnly, contract.id, { rules: program, ...MARCH }), 403);
    expectError(await previewOf(t(), "bl_live_not-a-key", contract.id, { rules: program, ...MARCH }), 401);
  });
});
