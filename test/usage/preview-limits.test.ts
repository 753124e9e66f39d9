/**
 * The pricing preview's size and its queue (docs/api.md, "Limits"): a month is read a page at a time and priced
 * exactly across pages, the largest month a preview takes (MAX_PREVIEW_EVENTS) is priced and one event more is
 * refused naming the field, and previews run one per company at a time, in turn between companies.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { MAX_PREVIEW_EVENTS } from "../../src/domain/usage/pricing-preview.js";
import {
  CONTRACTS,
  companyWithContract,
  getPricing,
  invoiceFor,
  submitAccepted,
  USAGE,
  usageEvent,
  verifyProblems,
} from "../support/api.js";
import { assertDecimal, expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";

const MARCH = { billing_period_start: "2026-03-01", billing_period_end: "2026-03-31" };

const previewOf = (t: TestApp, key: string, contractId: string, payload: object) =>
  t.call({ method: "POST", url: `${CONTRACTS}/${encodeURIComponent(contractId)}/pricing/preview`, key, payload });

/** The contract's program as the preview takes it, with the domestic wire priced at `amount`. */
async function programPricingWiresAt(t: TestApp, key: string, contractId: string, amount: string) {
  const program = await getPricing(t, key, contractId);
  return program.rules.map((rule: Record<string, unknown>) => {
    const fields = Object.fromEntries(Object.entries(rule).filter(([, v]) => v !== null));
    return rule.metric === "domestic_wire" ? { ...fields, amount, monthly_cap: undefined } : fields;
  });
}

/**
 * Stores `copies` more events like the company's event `eventId` straight into the table (each with an id of its
 * own), as a month of that many events would be stored: sending a hundred thousand events through the API would
 * cost the suite minutes. The copies are not on the draft's lines until the month is priced again (a void).
 */
async function storeCopies(t: TestApp, companyId: string, eventId: string, copies: number): Promise<void> {
  const { rows } = await t.app.db.query<{ column_name: string }>(
    `SELECT column_name FROM information_schema.columns
      WHERE table_name = 'usage_events' AND column_name NOT IN ('seq', 'id') ORDER BY ordinal_position`,
  );
  const columns = rows.map((r) => r.column_name).join(", ");
  await t.app.db.query(
    `INSERT INTO usage_events (id, ${columns})
     SELECT id || '-copy-' || g, ${columns} FROM usage_events, generate_series(1, $3::int) g
      WHERE company_id = $1 AND id = $2`,
    [companyId, eventId, copies],
  );
}

describeEachEngine("pricing preview: its size and its queue", (t) => {
  it("prices a month read over several pages exactly as a month read at once (2,500 events)", async () => {
    const { key, companyId, contract } = await companyWithContract(t());
    for (let batch = 0; batch < 25; batch++) {
      await submitAccepted(
        t(),
        key,
        Array.from({ length: 100 }, () => usageEvent(contract.id, { quantity: "0.5" })),
      );
    }
    const rules = await programPricingWiresAt(t(), key, contract.id, "0.01");
    const res = await previewOf(t(), key, contract.id, { rules, ...MARCH });
    expectStatus(res, 200);
    const answer = res.json();
    assert.equal(answer.events, 2500);
    const wires = answer.preview.line_items.find((l: { kind: string }) => l.kind === "usage");
    // 2,500 charges of 0.005 each, every event priced once, whichever page it was read in.
    assertDecimal(wires.quantity, 1250);
    assertDecimal(wires.amount, 12.5);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it(`prices the largest month a preview takes (${MAX_PREVIEW_EVENTS} events) and refuses one event more with 400 naming the field`, async () => {
    const { key, companyId, contract } = await companyWithContract(t());
    const first = usageEvent(contract.id, { quantity: 2 });
    await submitAccepted(t(), key, [first]);
    await storeCopies(t(), companyId, first.event_id as string, MAX_PREVIEW_EVENTS);
    // Voiding one prices the month's other 100,000 again: every copy lands on the draft's lines.
    expectStatus(await t().call({ method: "POST", url: `${USAGE}/${first.event_id}/void`, key }), 200);
    const draft = await invoiceFor(t(), key, contract.id);
    const usage = draft.line_items.find((l: { kind: string }) => l.kind === "usage");
    assertDecimal(usage!.quantity, 2 * MAX_PREVIEW_EVENTS);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
    const rules = await programPricingWiresAt(t(), key, contract.id, "0.01");
    const res = await previewOf(t(), key, contract.id, { rules, ...MARCH });
    expectStatus(res, 200);
    assert.equal(res.json().events, MAX_PREVIEW_EVENTS);
    const wires = res.json().preview.line_items.find((l: { kind: string }) => l.kind === "usage");
    assertDecimal(wires.amount, MAX_PREVIEW_EVENTS * 2 * 0.01);

    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 2 })]);
    const body = expectError(await previewOf(t(), key, contract.id, { rules, ...MARCH }), 400, "preview_too_large");
    assert.deepEqual(
      body.details?.map((d) => d.path),
      ["billing_period_start"],
    );
    // Another month of the same contract is no larger for it.
    expectStatus(
      await previewOf(t(), key, contract.id, {
        rules,
        billing_period_start: "2026-04-01",
        billing_period_end: "2026-04-30",
      }),
      200,
    );
  });

  it("prices one preview per company at a time: its second is refused 429 too_many_previews, another company's is priced meanwhile", async () => {
    const big = await companyWithContract(t());
    const first = usageEvent(big.contract.id, { quantity: 1 });
    await submitAccepted(t(), big.key, [first]);
    // A month that takes seconds to price again, so that the second preview arrives while the first runs.
    await storeCopies(t(), big.companyId, first.event_id as string, 60_000);
    const rules = await programPricingWiresAt(t(), big.key, big.contract.id, "0.02");
    const small = await companyWithContract(t());
    await submitAccepted(t(), small.key, [usageEvent(small.contract.id, { quantity: 3 })]);
    const smallRules = await programPricingWiresAt(t(), small.key, small.contract.id, "0.02");

    const [one, two, other] = await Promise.all([
      previewOf(t(), big.key, big.contract.id, { rules, ...MARCH }),
      previewOf(t(), big.key, big.contract.id, { rules, ...MARCH }),
      previewOf(t(), small.key, small.contract.id, { rules: smallRules, ...MARCH }),
    ]);
    const statuses = [one.statusCode, two.statusCode].sort();
    assert.deepEqual(statuses, [200, 429], "one of the company's two previews priced, the other refused");
    const refused = one.statusCode === 429 ? one : two;
    expectError(refused, 429, "too_many_previews");
    assert.ok(Number(refused.headers["retry-after"]) > 0, "Retry-After says when to try again");
    expectStatus(other, 200);
    assert.equal(other.json().events, 1);
    // Once its first has answered, the company may preview again (April: a month without events).
    const april = { billing_period_start: "2026-04-01", billing_period_end: "2026-04-30" };
    expectStatus(await previewOf(t(), big.key, big.contract.id, { rules, ...april }), 200);
  });
});
