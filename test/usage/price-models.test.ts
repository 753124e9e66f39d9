import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { Big } from "../../src/domain/kernel/money.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import {
  CONTRACTS,
  addRule,
  assertInvoicesMatchEvents,
  companyWithContract,
  eventsOf,
  getInvoice,
  getPricing,
  INVOICES,
  invoiceFor,
  lineNamed,
  rejectionOf,
  submitAccepted,
  submitInParallel,
  sum,
  usageEvent,
  type LineItem,
  verifyProblems,
} from "../support/api.js";
import { assertDecimal, expectError, expectStatus } from "../support/assertions.js";

/** 0.10 a unit up to 1,000, 0.08 up to 10,000 (5.00 on entering), 0.05 above. */
const TIERS = [
  { up_to: 1000, unit_amount: "0.10" },
  { up_to: 10000, unit_amount: "0.08", flat_amount: 5 },
  { up_to: null, unit_amount: "0.05" },
];

/** The graduated total of a month's quantity under TIERS, worked out by hand for the test's quantities. */
function graduatedTotal(quantity: number): Big {
  const q = new Big(quantity);
  let total = q.lt(1000) ? q.times("0.10") : new Big(100);
  if (q.gt(1000)) total = total.plus(5).plus((q.lt(10000) ? q : new Big(10000)).minus(1000).times("0.08"));
  if (q.gt(10000)) total = total.plus(q.minus(10000).times("0.05"));
  return total;
}

async function contractWithRule(t: TestApp, rule: Record<string, unknown>) {
  const { key, companyId, contract } = await companyWithContract(t);
  const added = await addRule(t, key, contract.id, rule);
  return { key, companyId, contract, rule: added.rule };
}

/**
 * The graduated line under TIERS after a month of `total` units: its quantity, its amount rounded once, its events
 * summing to its exact total, every invoice matching its events, billing verify clean. Returns the line.
 */
async function assertGraduatedLine(
  t: TestApp,
  { key, companyId, contractId }: { key: string; companyId: string; contractId: string },
  events: readonly { rated_amount: number }[],
  total: number,
) {
  const line = lineNamed(await invoiceFor(t, key, contractId), "api_calls usage");
  assertDecimal(line.quantity, total);
  assertDecimal(line.amount, graduatedTotal(total).round(2, Big.roundHalfEven));
  assertDecimal(sum(events.map((e) => e.rated_amount)), graduatedTotal(total), "the events sum to the line");
  await assertInvoicesMatchEvents(t, key, contractId);
  assert.deepEqual(await verifyProblems(t, companyId), []);
  return line;
}

describeEachEngine("price models through the API", (t) => {
  it("stores a graduated rule's tiers exactly and shows them, with no field of another model", async () => {
    const { key, contract, rule } = await contractWithRule(t(), {
      metric: "api_calls",
      model: "graduated",
      tiers: TIERS,
    });
    assert.deepEqual(
      rule.tiers?.map((tier) => [tier.up_to, tier.unit_amount, tier.flat_amount]),
      [
        [1000, "0.10", null],
        [10000, "0.08", "5.00"],
        [null, "0.05", null],
      ],
    );
    assert.equal(rule.amount, null);
    assert.equal(rule.rate, null);
    assert.equal("package_size" in rule, false);
    const pricing = await getPricing(t(), key, contract.id);
    const domestic = pricing.rules.find((r) => r.metric === "domestic_wire");
    assert.equal(domestic !== undefined && "tiers" in domestic, false, "a flat rule shows no tiers field");
  });

  it("charges each graduated event what the month's total grows by, across tiers, in any order", async () => {
    const { key, companyId, contract } = await contractWithRule(t(), {
      metric: "api_calls",
      model: "graduated",
      tiers: TIERS,
    });
    const quantities = [300, 500, 1, 199, 8000, 1500, "0.5"];
    for (const quantity of quantities) {
      await submitAccepted(t(), key, [usageEvent(contract.id, { metric: "api_calls", quantity })]);
    }
    const events = (await eventsOf(t(), key, contract.id)).filter((e) => e.metric === "api_calls");
    const byQuantity = new Map(events.map((e) => [String(e.quantity), e]));
    assertDecimal(byQuantity.get("300")!.rated_amount, "30", "inside the first tier");
    assertDecimal(byQuantity.get("500")!.rated_amount, "50", "still inside the first tier");
    assertDecimal(byQuantity.get("199")!.rated_amount, "19.9", "up to 1,000 inclusive: the first tier's");
    assertDecimal(byQuantity.get("8000")!.rated_amount, "645", "8,000 at 0.08 and 5.00 on entering the second tier");
    assertDecimal(byQuantity.get("1500")!.rated_amount, "105", "1,000 at 0.08, then 500 at 0.05");
    assert.equal(byQuantity.get("300")!.applied_rate, null, "no single rate priced it");
    const total = 300 + 500 + 1 + 199 + 8000 + 1500 + 0.5;
    const line = await assertGraduatedLine(t(), { key, companyId, contractId: contract.id }, events, total);
    assertDecimal(line.unit_price, new Big(line.amount).div(total).round(12, Big.roundHalfEven), "amount ÷ quantity");
  });

  it("prices 16 concurrent requests on one graduated line exactly as one after the other", async () => {
    const { key, companyId, contract } = await contractWithRule(t(), {
      metric: "api_calls",
      model: "graduated",
      tiers: TIERS,
    });
    const batches = Array.from({ length: 16 }, (_, i) =>
      Array.from({ length: 10 }, (_, j) => usageEvent(contract.id, { metric: "api_calls", quantity: 7 * i + j + 1 })),
    );
    const results = await submitInParallel(t(), key, batches);
    assert.equal(
      results.reduce((n, r) => n + r.accepted, 0),
      160,
    );
    const total = batches.flat().reduce((n, e) => n + (e.quantity as number), 0);
    const events = (await eventsOf(t(), key, contract.id)).filter((e) => e.metric === "api_calls");
    assert.equal(events.length, 160);
    await assertGraduatedLine(t(), { key, companyId, contractId: contract.id }, events, total);
  });

  it("charges a volume event that moves the month into a cheaper tier a negative amount, the line always right", async () => {
    const { key, companyId, contract } = await contractWithRule(t(), {
      metric: "api_calls",
      model: "volume",
      tiers: TIERS,
    });
    await submitAccepted(t(), key, [usageEvent(contract.id, { metric: "api_calls", quantity: 1000 })]);
    await submitAccepted(t(), key, [usageEvent(contract.id, { metric: "api_calls", quantity: 1 })]);
    const events = (await eventsOf(t(), key, contract.id)).filter((e) => e.metric === "api_calls");
    assert.deepEqual(
      events.map((e) => [e.quantity, String(e.rated_amount)]),
      [
        [1, "-14.92"],
        [1000, "100"],
      ],
    );
    const line = lineNamed(await invoiceFor(t(), key, contract.id), "api_calls usage");
    assert.deepEqual([line.quantity, line.amount], [1001, 85.08]);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("charges a package rule per started package", async () => {
    const { key, contract } = await contractWithRule(t(), {
      metric: "sms",
      model: "package",
      package_size: 1000,
      amount: "10",
    });
    await submitAccepted(t(), key, [
      usageEvent(contract.id, { metric: "sms", quantity: 1500 }),
      usageEvent(contract.id, { metric: "sms", quantity: 400 }),
      usageEvent(contract.id, { metric: "sms", quantity: 101 }),
    ]);
    const amounts = (await eventsOf(t(), key, contract.id))
      .filter((e) => e.metric === "sms")
      .map((e) => [e.quantity, e.rated_amount]);
    assert.deepEqual(amounts, [
      [101, 10],
      [400, 0],
      [1500, 20],
    ]);
    assert.equal(lineNamed(await invoiceFor(t(), key, contract.id), "sms usage").amount, 30);
  });

  it("adds a percentage rule's fixed fee per event and holds the charge between its bounds", async () => {
    const { key, contract } = await contractWithRule(t(), {
      metric: "card_volume",
      rate: "0.029",
      fixed_fee: "0.30",
      min_fee: "0.50",
      max_fee: "40",
    });
    await submitAccepted(t(), key, [
      usageEvent(contract.id, { metric: "card_volume", quantity: 100 }),
      usageEvent(contract.id, { metric: "card_volume", quantity: 1 }),
      usageEvent(contract.id, { metric: "card_volume", quantity: 10000 }),
    ]);
    const amounts = (await eventsOf(t(), key, contract.id))
      .filter((e) => e.metric === "card_volume")
      .map((e) => [e.quantity, e.rated_amount, e.applied_rate]);
    assert.deepEqual(amounts, [
      [10000, 40, 0.029],
      [1, 0.5, 0.029],
      [100, 3.2, 0.029],
    ]);
    const line = lineNamed(await invoiceFor(t(), key, contract.id), "card_volume usage");
    assert.deepEqual([line.quantity, line.unit_price, line.amount], [10101, 0.029, 43.7]);
  });

  it("keeps a graduated line under its monthly cap: the cap, not the tiers, once reached", async () => {
    const { key, companyId, contract } = await contractWithRule(t(), {
      metric: "api_calls",
      model: "graduated",
      tiers: TIERS,
      monthly_cap: "150",
    });
    for (const quantity of [1000, 500, 500, 1000]) {
      await submitAccepted(t(), key, [usageEvent(contract.id, { metric: "api_calls", quantity })]);
    }
    const line = lineNamed(await invoiceFor(t(), key, contract.id), "api_calls usage");
    assert.deepEqual([line.quantity, line.amount], [3000, 150]);
    assert.deepEqual(await verifyProblems(t(), companyId), []);
  });

  it("refuses an applied rate under a graduated rule, and an event in a month after the current one", async () => {
    const { key, contract } = await contractWithRule(t(), { metric: "api_calls", model: "graduated", tiers: TIERS });
    const refused = await rejectionOf(
      t(),
      key,
      usageEvent(contract.id, { metric: "api_calls", applied_rate: "0.5" }),
      "invalid_event",
    );
    assert.match(refused.message, /applied_rate cannot price an event of rule/);
    const future = await rejectionOf(
      t(),
      key,
      usageEvent(contract.id, { timestamp: "2026-04-01T00:00:00Z" }),
      "timestamp_in_future",
    );
    assert.match(future.message, /2026-03/);
    assert.equal((await eventsOf(t(), key, contract.id)).length, 0, "nothing stored");
  });

  it("refuses a rule that does not add up with 400 invalid_pricing_rule naming each field, and stores nothing", async () => {
    const { key, contract } = await companyWithContract(t());
    const before = await getPricing(t(), key, contract.id);
    const url = `${CONTRACTS}/${contract.id}/pricing-rules`;
    const cases: [Record<string, unknown>, string][] = [
      [{ metric: "m", rate: "2.35" }, "rate"],
      [{ metric: "m", model: "graduated" }, "tiers"],
      [
        {
          metric: "m",
          model: "graduated",
          tiers: [
            { up_to: 10, unit_amount: 1 },
            { up_to: 5, unit_amount: 1 },
            { up_to: null, unit_amount: 1 },
          ],
        },
        "tiers.1.up_to",
      ],
      [{ metric: "m", model: "volume", tiers: [{ up_to: null, unit_amount: 1 }, { unit_amount: 2 }] }, "tiers.0.up_to"],
      [{ metric: "m", model: "package", amount: 1, package_size: 2.5 }, "package_size"],
      [{ metric: "m", rate: "0.01", min_fee: 5, max_fee: 1 }, "min_fee"],
      [{ metric: "m", amount: 1, fixed_fee: "0.30" }, "fixed_fee"],
    ];
    for (const [payload, path] of cases) {
      const res = await t().call({ method: "POST", url, key, payload });
      const body = expectError(res, 400, "invalid_pricing_rule");
      assert.ok(
        (body.details as { path: string }[]).some((d) => d.path === path),
        `${JSON.stringify(payload)} names ${path}: ${JSON.stringify(body.details)}`,
      );
    }
    const tierShape = await t().call({
      method: "POST",
      url,
      key,
      payload: { metric: "m", model: "graduated", tiers: [{ up_to: null, unit_amount: 1, extra: 1 }] },
    });
    expectError(tierShape, 400, "invalid_request");
    assert.equal((await getPricing(t(), key, contract.id)).version, before.version, "no version written");
    const allowed = await addRule(t(), key, contract.id, { metric: "fx", rate: "2.35", allow_rate_above_one: true });
    assert.deepEqual([allowed.rule.rate, allowed.rule.allow_rate_above_one], [2.35, true]);
  });

  describe("a graduated or volume line's tiers", () => {
    /** [up_to, unit_amount, flat_amount, quantity, amount] of each tier of a line item, decimals as exact strings. */
    const tierRows = (line: LineItem) =>
      (line.tiers ?? []).map((tier) => [
        tier.up_to === null ? null : new Big(tier.up_to).toFixed(),
        new Big(tier.unit_amount).toFixed(),
        tier.flat_amount === null ? null : new Big(tier.flat_amount).toFixed(),
        new Big(tier.quantity).toFixed(),
        new Big(tier.amount).toFixed(),
      ]);
    /** Σ tier amounts + cap adjustment, exactly. */
    const tiersSum = (line: LineItem) =>
      (line.tiers ?? []).reduce((s, tier) => s.plus(tier.amount), new Big(line.cap_adjustment ?? 0));

    it("shows each tier reached with its quantity and exact amount, summing to the line's exact total", async () => {
      const { key, companyId, contract } = await contractWithRule(t(), {
        metric: "api_calls",
        model: "graduated",
        tiers: TIERS,
      });
      for (const quantity of [300, 900, "9000.5"]) {
        await submitAccepted(t(), key, [usageEvent(contract.id, { metric: "api_calls", quantity })]);
      }
      const invoice = await invoiceFor(t(), key, contract.id);
      const line = lineNamed(invoice, "api_calls usage");
      assert.deepEqual(tierRows(line), [
        ["1000", "0.1", null, "1000", "100"],
        ["10000", "0.08", "5", "9000", "725"],
        [null, "0.05", null, "200.5", "10.025"],
      ]);
      assert.equal(line.cap_adjustment, undefined, "no cap, no adjustment");
      const events = (await eventsOf(t(), key, contract.id)).filter((e) => e.metric === "api_calls");
      const exact = sum(events.map((e) => e.rated_amount));
      assertDecimal(exact, "835.025");
      assertDecimal(tiersSum(line), exact, "the tiers sum to the line's exact total");
      assertDecimal(line.amount, "835.02", "the line's amount is rounded once, half-even");
      const domestic = invoice.line_items.filter((l) => l.description !== "api_calls usage");
      assert.ok(
        domestic.every((l) => !("tiers" in l) && !("cap_adjustment" in l)),
        "other lines read as before",
      );
      assert.deepEqual(await verifyProblems(t(), companyId), []);
    });

    it("a volume line shows only the tier its quantity reached", async () => {
      const { key, contract } = await contractWithRule(t(), { metric: "api_calls", model: "volume", tiers: TIERS });
      await submitAccepted(t(), key, [usageEvent(contract.id, { metric: "api_calls", quantity: 1000 })]);
      await submitAccepted(t(), key, [usageEvent(contract.id, { metric: "api_calls", quantity: 1 })]);
      const line = lineNamed(await invoiceFor(t(), key, contract.id), "api_calls usage");
      assert.deepEqual(tierRows(line), [["10000", "0.08", "5", "1001", "85.08"]]);
      assertDecimal(tiersSum(line), "85.08");
    });

    it("a capped graduated line shows its uncapped tiers and the cap adjustment; an issued invoice keeps them", async () => {
      const { key, contract } = await contractWithRule(t(), {
        metric: "api_calls",
        model: "graduated",
        tiers: TIERS,
        monthly_cap: "150",
      });
      for (const quantity of [1000, 500, 500, 1000]) {
        await submitAccepted(t(), key, [usageEvent(contract.id, { metric: "api_calls", quantity })]);
      }
      const draft = await invoiceFor(t(), key, contract.id);
      const line = lineNamed(draft, "api_calls usage");
      assert.deepEqual(tierRows(line), [
        ["1000", "0.1", null, "1000", "100"],
        ["10000", "0.08", "5", "2000", "165"],
      ]);
      assertDecimal(line.cap_adjustment!, "-115");
      const events = (await eventsOf(t(), key, contract.id)).filter((e) => e.metric === "api_calls");
      assertDecimal(tiersSum(line), sum(events.map((e) => e.rated_amount)), "tiers + adjustment = the exact total");
      assertDecimal(line.amount, 150);

      const started = t().clock.now();
      t().clock.set(new Date("2026-04-06T09:30:00.000Z"));
      try {
        const res = await t().call({ method: "POST", url: `${INVOICES}/${draft.number}/finalize`, key });
        expectStatus(res, 200);
        const issued = await getInvoice(t(), key, draft.number);
        assert.equal(issued.status, "issued");
        const kept = lineNamed(issued, "api_calls usage");
        assert.deepEqual(tierRows(kept), tierRows(line), "the issued invoice keeps its tiers");
        assertDecimal(kept.cap_adjustment!, "-115");
      } finally {
        t().clock.set(started);
      }
    });
  });
});
