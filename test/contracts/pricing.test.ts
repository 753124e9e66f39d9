import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import {
  CONTRACTS,
  addRule,
  companyWithContract,
  getEvent,
  getPricing,
  rejectionOf,
  submitAccepted,
  updateRule,
  usageEvent,
  type Rule,
} from "../support/api.js";
import { expectError } from "../support/assertions.js";

const rulesUrl = (contractId: string) => `${CONTRACTS}/${contractId}/pricing-rules`;

/** The stored program versions of a contract, oldest first. */
async function storedVersions(
  t: TestApp,
  companyId: string,
  contractId: string,
): Promise<{ version: number; rules: Rule[] }[]> {
  const { rows } = await t.app.db.query<{ version: number; rules: Rule[] | string }>(
    "SELECT version, rules FROM pricing_program_versions WHERE company_id = $1 AND contract_id = $2 ORDER BY version",
    [companyId, contractId],
  );
  return rows.map((r) => ({ version: r.version, rules: typeof r.rules === "string" ? JSON.parse(r.rules) : r.rules }));
}

describeEachEngine("pricing programs", (t) => {
  it("adds a usage rule as a new program version with 201 and an id assigned by the service", async () => {
    const { key, contract } = await companyWithContract(t());
    const added = await addRule(t(), key, contract.id, {
      name: "Card volume",
      metric: "card_volume",
      model: "percentage",
      rate: 0.029,
    });
    assert.equal(added.object, "pricing_rule");
    assert.equal(added.contract, contract.id);
    assert.equal(added.version, 2);
    assert.equal(typeof added.rule.id, "string");
    assert.ok(added.rule.id.length > 0);
    assert.equal(added.rule.name, "Card volume");
    assert.equal(added.rule.type, "usage");
    assert.equal(added.rule.model, "percentage");
    assert.equal(added.rule.rate, 0.029);
    assert.equal(added.rule.amount, null);
    assert.equal(added.rule.metric, "card_volume");
    assert.equal(added.rule.currency, "USD");
    const program = await getPricing(t(), key, contract.id);
    assert.equal(program.version, 2);
    assert.equal(program.rules.length, 4);
    assert.deepEqual(program.rules.at(-1), added.rule);
    const refreshed = (await t().call({ method: "GET", url: `${CONTRACTS}/${contract.id}`, key })).json();
    assert.deepEqual(refreshed.metrics, ["domestic_wire", "international_wire", "card_volume"]);
  });

  it("takes a rule with only a metric and rate 0 as a percentage usage rule (the spec's volume-plus-fee setup)", async () => {
    const { key, contract } = await companyWithContract(t());
    const added = await addRule(t(), key, contract.id, { metric: "usd_transaction_volume_processed", rate: 0 });
    assert.equal(added.rule.type, "usage");
    assert.equal(added.rule.model, "percentage");
    assert.equal(added.rule.rate, 0);
    assert.equal(added.rule.metric, "usd_transaction_volume_processed");
  });

  it("keeps a supplied rule id and answers 409 when that id already exists on the contract", async () => {
    const { key, contract } = await companyWithContract(t());
    const added = await addRule(t(), key, contract.id, { id: "fx-fee", metric: "fx", rate: "0.001" });
    assert.equal(added.rule.id, "fx-fee");
    const again = await t().call({
      method: "POST",
      url: rulesUrl(contract.id),
      key,
      payload: { id: "fx-fee", metric: "fx2", rate: 0.002 },
    });
    expectError(again, 409);
    const sampleRuleId = (await getPricing(t(), key, contract.id)).rules[0]!.id;
    expectError(
      await t().call({
        method: "POST",
        url: rulesUrl(contract.id),
        key,
        payload: { id: sampleRuleId, metric: "m", rate: 0 },
      }),
      409,
    );
    const program = await getPricing(t(), key, contract.id);
    assert.equal(program.version, 2, "a refused rule makes no version");
    assert.equal(program.rules.filter((r) => r.id === "fx-fee").length, 1);
  });

  it("lets two contracts use the same rule id", async () => {
    const { key, contract } = await companyWithContract(t());
    const other = await companyWithContract(t());
    await addRule(t(), key, contract.id, { id: "shared-id", metric: "m", rate: 0 });
    await addRule(t(), other.key, other.contract.id, { id: "shared-id", metric: "m", rate: 0 });
  });

  it("refuses an empty or malformed rule id with 400", async () => {
    const { key, contract } = await companyWithContract(t());
    for (const id of ["", "has space", "x".repeat(65), 42]) {
      expectError(
        await t().call({ method: "POST", url: rulesUrl(contract.id), key, payload: { id, metric: "m", rate: 0 } }),
        400,
      );
    }
    assert.equal((await getPricing(t(), key, contract.id)).version, 1);
  });

  it("answers 404 when adding a rule to an unknown contract", async () => {
    const { key } = await companyWithContract(t());
    expectError(
      await t().call({ method: "POST", url: rulesUrl("no-such-contract"), key, payload: { metric: "m", rate: 0 } }),
      404,
    );
  });

  it("merges an update into the rule and writes a new version, keeping every earlier version as it was", async () => {
    const { key, companyId, contract } = await companyWithContract(t());
    const v1 = await getPricing(t(), key, contract.id);
    const domestic = v1.rules.find((r) => r.metric === "domestic_wire")!;
    const updated = await updateRule(t(), key, contract.id, domestic.id, { amount: "25.00" });
    assert.equal(updated.object, "pricing_rule");
    assert.equal(updated.version, 2);
    assert.deepEqual(updated.rule, { ...domestic, amount: "25.00" }, "only the supplied field changed");
    const renamed = await updateRule(t(), key, contract.id, domestic.id, { name: "Domestic wire (new)" });
    assert.equal(renamed.version, 3);
    assert.deepEqual(renamed.rule, { ...domestic, amount: "25.00", name: "Domestic wire (new)" });
    const v3 = await getPricing(t(), key, contract.id);
    assert.equal(v3.version, 3);
    assert.equal(v3.rules.length, 3);
    assert.deepEqual(
      v3.rules.find((r) => r.id === domestic.id),
      renamed.rule,
    );

    const versions = await storedVersions(t(), companyId, contract.id);
    assert.deepEqual(
      versions.map((v) => v.version),
      [1, 2, 3],
    );
    const priceIn = (v: { rules: Rule[] }) => v.rules.find((r) => r.id === domestic.id)!;
    assert.equal(priceIn(versions[0]!).amount, "20.00");
    assert.equal(priceIn(versions[0]!).name, domestic.name);
    assert.equal(priceIn(versions[1]!).amount, "25.00");
    assert.equal(priceIn(versions[1]!).name, domestic.name);
    assert.equal(priceIn(versions[2]!).name, "Domestic wire (new)");
  });

  it("keeps every version when rules are added, one version per change, in order", async () => {
    const { key, companyId, contract } = await companyWithContract(t());
    const a = await addRule(t(), key, contract.id, { id: "a", metric: "metric_a", rate: 0.1 });
    const b = await addRule(t(), key, contract.id, { id: "b", metric: "metric_b", amount: "2.00" });
    await updateRule(t(), key, contract.id, "a", { rate: 0.2 });
    const versions = await storedVersions(t(), companyId, contract.id);
    assert.deepEqual(
      versions.map((v) => [v.version, v.rules.map((r) => r.id).slice(3)]),
      [
        [1, []],
        [2, ["a"]],
        [3, ["a", "b"]],
        [4, ["a", "b"]],
      ],
    );
    assert.equal(versions[2]!.rules.find((r) => r.id === "a")!.rate, a.rule.rate === null ? null : String(a.rule.rate));
    assert.equal(versions[3]!.rules.find((r) => r.id === "a")!.rate, "0.2");
    assert.equal(b.version, 3);
  });

  it("gives each of many concurrent rule additions its own version and loses none of them", async () => {
    const { key, contract } = await companyWithContract(t());
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        t().call({
          method: "POST",
          url: rulesUrl(contract.id),
          key,
          payload: { id: `r${i}`, metric: `metric_${i}`, rate: 0.01 },
        }),
      ),
    );
    for (const res of results) assert.equal(res.statusCode, 201, res.body);
    assert.deepEqual(
      results.map((r) => r.json().version).sort((x, y) => x - y),
      [2, 3, 4, 5, 6, 7, 8, 9, 10, 11],
    );
    const program = await getPricing(t(), key, contract.id);
    assert.equal(program.version, 11);
    assert.deepEqual(
      program.rules
        .map((r) => r.id)
        .filter((id) => /^r\d$/.test(id))
        .sort(),
      Array.from({ length: 10 }, (_, i) => `r${i}`),
    );
  });

  it("makes the contract's metrics follow its usage rules when a rule's metric changes", async () => {
    const { key, contract } = await companyWithContract(t());
    const domestic = (await getPricing(t(), key, contract.id)).rules.find((r) => r.metric === "domestic_wire")!;
    await updateRule(t(), key, contract.id, domestic.id, { metric: "ach_transfer" });
    const refreshed = (await t().call({ method: "GET", url: `${CONTRACTS}/${contract.id}`, key })).json();
    assert.deepEqual(refreshed.metrics, ["ach_transfer", "international_wire"]);
    await rejectionOf(t(), key, usageEvent(contract.id, { metric: "domestic_wire" }), "unknown_metric");
    const ok = usageEvent(contract.id, { metric: "ach_transfer", quantity: 2 });
    await submitAccepted(t(), key, [ok]);
    const stored = await getEvent(t(), key, ok.event_id as string);
    assert.equal(stored.rule_id, domestic.id);
    assert.equal(stored.rated_amount, 40);
  });

  it("prices events with the version current when they arrive; earlier events keep their rating", async () => {
    const { key, contract } = await companyWithContract(t());
    const domestic = (await getPricing(t(), key, contract.id)).rules.find((r) => r.metric === "domestic_wire")!;
    const before = usageEvent(contract.id, { quantity: 2 });
    await submitAccepted(t(), key, [before]);
    await updateRule(t(), key, contract.id, domestic.id, { amount: "25.00" });
    const after = usageEvent(contract.id, { quantity: 2 });
    await submitAccepted(t(), key, [after]);
    const first = await getEvent(t(), key, before.event_id as string);
    const second = await getEvent(t(), key, after.event_id as string);
    assert.equal(first.pricing_version, 1);
    assert.equal(first.rated_amount, 40);
    assert.equal(first.applied_rate, 20);
    assert.equal(second.pricing_version, 2);
    assert.equal(second.rated_amount, 50);
    assert.equal(second.applied_rate, 25);
    assert.equal(first.rule_id, domestic.id);
    assert.equal(second.rule_id, domestic.id);
  });

  it("clears an optional field with null and switches a rule's model when the new price comes with it", async () => {
    const { key, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { id: "capped", metric: "calls", amount: "0.10", monthly_cap: "50.00" });
    const uncapped = await updateRule(t(), key, contract.id, "capped", { monthly_cap: null });
    assert.equal(uncapped.rule.monthly_cap, null);
    const percentage = await updateRule(t(), key, contract.id, "capped", { model: "percentage", rate: 0.5 });
    assert.equal(percentage.rule.model, "percentage");
    assert.equal(percentage.rule.rate, 0.5);
    assert.equal(percentage.rule.amount, null);
    expectError(
      await t().call({ method: "PUT", url: `${rulesUrl(contract.id)}/capped`, key, payload: { model: "flat" } }),
      400,
      "invalid_pricing_rule",
    );
  });

  it("answers 404 when updating an unknown rule or a rule of an unknown contract", async () => {
    const { key, contract } = await companyWithContract(t());
    const ruleId = (await getPricing(t(), key, contract.id)).rules[0]!.id;
    expectError(
      await t().call({ method: "PUT", url: `${rulesUrl(contract.id)}/no-such-rule`, key, payload: { amount: "1.00" } }),
      404,
    );
    expectError(
      await t().call({
        method: "PUT",
        url: `${rulesUrl("no-such-contract")}/${ruleId}`,
        key,
        payload: { amount: "1.00" },
      }),
      404,
    );
    assert.equal((await getPricing(t(), key, contract.id)).version, 1);
  });

  it("refuses to change a rule's id on update", async () => {
    const { key, contract } = await companyWithContract(t());
    const ruleId = (await getPricing(t(), key, contract.id)).rules[0]!.id;
    expectError(
      await t().call({ method: "PUT", url: `${rulesUrl(contract.id)}/${ruleId}`, key, payload: { id: "renamed" } }),
      400,
    );
    assert.equal((await getPricing(t(), key, contract.id)).version, 1);
  });

  it("shows money as strings with at least the currency's cents and rates as numbers", async () => {
    const { key, contract } = await companyWithContract(t());
    const flat = await addRule(t(), key, contract.id, { metric: "check", amount: 7 });
    assert.equal(flat.rule.amount, "7.00");
    assert.equal(flat.rule.model, "flat");
    const fine = await addRule(t(), key, contract.id, { metric: "sms", amount: "0.0125", monthly_cap: "15.5" });
    assert.equal(fine.rule.amount, "0.0125");
    assert.equal(fine.rule.monthly_cap, "15.50");
    const pct = await addRule(t(), key, contract.id, { metric: "volume", model: "percentage", rate: "0.05" });
    assert.equal(pct.rule.rate, 0.05);
    const sub = await addRule(t(), key, contract.id, { type: "subscription", amount: "1500" });
    assert.equal(sub.rule.amount, "1500.00");
    assert.equal(sub.rule.frequency, "monthly");
    assert.equal(sub.rule.model, "flat");
  });
});

describeEachEngine("pricing rule validation", (t) => {
  const invalid: [string, Record<string, unknown>][] = [
    ["a percentage rule without a rate", { metric: "m", model: "percentage" }],
    ["a flat usage rule without an amount", { metric: "m", model: "flat" }],
    ["a usage rule without a metric", { type: "usage", rate: 0.1 }],
    ["a rule without a type or metric", { amount: "5.00" }],
    ["a subscription without an amount", { type: "subscription" }],
    ["a percentage rule with an amount", { metric: "m", model: "percentage", rate: 0.1, amount: "1.00" }],
    ["a flat rule with a rate", { metric: "m", model: "flat", amount: "1.00", rate: 0.1 }],
    ["a subscription with a metric", { type: "subscription", amount: "10.00", metric: "m" }],
    ["a subscription with a percentage model", { type: "subscription", model: "percentage", rate: 0.1 }],
    ["a cap on a subscription", { type: "subscription", amount: "10.00", monthly_cap: "5.00" }],
    ["a counterparty on a subscription", { type: "subscription", amount: "10.00", counterparty: "bank" }],
    ["an amount that is not a decimal", { metric: "m", amount: "abc" }],
    ["an amount in exponent notation past 12 decimals", { metric: "m", amount: "1e-13" }],
    ["an amount with two points", { metric: "m", amount: "20.00.0" }],
    ["an amount with a currency sign", { metric: "m", amount: "$20" }],
    ["an empty amount", { metric: "m", amount: "" }],
    ["a negative amount", { metric: "m", amount: "-5.00" }],
    ["a negative number amount", { metric: "m", amount: -5 }],
    ["a negative rate", { metric: "m", rate: -0.1 }],
    ["a rate given as words", { metric: "m", rate: "five percent" }],
    ["a huge amount", { metric: "m", amount: "1000000000000000" }],
    ["a cap with fractions of a cent", { metric: "m", amount: "1.00", monthly_cap: "10.001" }],
    ["a negative cap", { metric: "m", amount: "1.00", monthly_cap: "-1.00" }],
    ["an unknown type", { type: "tiered", metric: "m", amount: "1.00" }],
    ["an unknown model", { metric: "m", model: "graduated", amount: "1.00" }],
    ["an unknown field", { metric: "m", rate: 0.1, price: "1.00" }],
    ["a frequency other than monthly", { type: "subscription", amount: "10.00", frequency: "weekly" }],
    ["a frequency on a usage rule", { metric: "m", rate: 0.1, frequency: "monthly" }],
    ["another currency than the contract's", { metric: "m", rate: 0.1, currency: "EUR" }],
    ["an unknown currency", { metric: "m", rate: 0.1, currency: "ZZZ" }],
    ["an empty name", { metric: "m", rate: 0.1, name: "" }],
    ["a metric with spaces", { metric: "domestic wire", rate: 0.1 }],
    ["a number for the metric", { metric: 5, rate: 0.1 }],
  ];

  for (const [what, body] of invalid) {
    it(`refuses ${what} with 400 and makes no version`, async () => {
      const { key, contract } = await companyWithContract(t());
      const res = await t().call({ method: "POST", url: rulesUrl(contract.id), key, payload: body });
      const error = expectError(res, 400);
      assert.ok(["invalid_request", "invalid_pricing_rule"].includes(error.code), error.code);
      assert.ok(Array.isArray(error.details) && error.details.length > 0, "details say what is wrong");
      assert.equal((await getPricing(t(), key, contract.id)).version, 1);
    });
  }

  it("names the missing field of a percentage or flat rule in the details", async () => {
    const { key, contract } = await companyWithContract(t());
    const noRate = expectError(
      await t().call({
        method: "POST",
        url: rulesUrl(contract.id),
        key,
        payload: { metric: "m", model: "percentage" },
      }),
      400,
      "invalid_pricing_rule",
    );
    assert.ok(
      noRate.details!.some((d) => d.path === "rate"),
      JSON.stringify(noRate),
    );
    const noAmount = expectError(
      await t().call({ method: "POST", url: rulesUrl(contract.id), key, payload: { metric: "m", model: "flat" } }),
      400,
      "invalid_pricing_rule",
    );
    assert.ok(
      noAmount.details!.some((d) => d.path === "amount"),
      JSON.stringify(noAmount),
    );
  });

  it("validates the merged rule on update: an update that leaves the rule invalid is refused", async () => {
    const { key, contract } = await companyWithContract(t());
    const ruleId = (await getPricing(t(), key, contract.id)).rules.find((r) => r.metric === "domestic_wire")!.id;
    for (const fields of [
      { amount: null },
      { amount: "-1" },
      { amount: "twenty" },
      { type: "dinner" },
      { unknown: 1 },
      { model: "percentage" },
    ]) {
      expectError(
        await t().call({ method: "PUT", url: `${rulesUrl(contract.id)}/${ruleId}`, key, payload: fields }),
        400,
      );
    }
    assert.equal((await getPricing(t(), key, contract.id)).version, 1);
  });
});
