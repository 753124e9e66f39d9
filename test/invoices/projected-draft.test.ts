import assert from "node:assert/strict";
import { afterEach, it } from "node:test";
import { describeEachEngine } from "../support/harness.js";
import {
  APRIL,
  INVOICES,
  addRule,
  companyWithContract,
  getInvoice,
  invoiceFor,
  invoicesOf,
  project,
  submitAccepted,
  usageEvent,
  minimumWords,
} from "../support/api.js";
import { assertDecimal, expectStatus } from "../support/assertions.js";

// The live draft's `projected` block (docs/api.md, "Invoices", the live draft): what the month will bill if
// nothing else arrives, beside the lines the draft holds now.

describeEachEngine("a draft's projected month", (t) => {
  afterEach(() => t().clock.set(new Date("2026-03-15T12:00:00.000Z")));

  it("shows the subscription and the minimum's top-up a draft does not hold yet, and finalizing bills exactly that", async () => {
    const { key, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { type: "subscription", name: "Platform fee", amount: "500.00" });
    // 2 domestic wires (40) and 1 international (30): 70 of usage, against the sample's 1000 minimum.
    await submitAccepted(t(), key, [
      usageEvent(contract.id, { quantity: 2 }),
      usageEvent(contract.id, { metric: "international_wire" }),
    ]);
    const draft = await invoiceFor(t(), key, contract.id);
    assert.equal(draft.status, "draft");
    // The lines stay as they are: usage only until projection.
    assert.deepEqual(
      draft.line_items.map((l) => l.kind),
      ["usage", "usage"],
    );
    assertDecimal(draft.total, "70");
    const projected = draft.projected!;
    assert.ok(projected, "a draft has a projected block");
    assertDecimal(projected.subscriptions, "500");
    assertDecimal(projected.one_time_fees, "0");
    assertDecimal(projected.minimum_top_up, "430");
    assertDecimal(projected.subtotal, "1000");
    assertDecimal(projected.tax, "0");
    assertDecimal(projected.total, "1000");
    assert.deepEqual(
      projected.line_items.map((l) => [l.kind, l.description, l.amount]),
      [
        ["subscription", "Platform fee", 500],
        ["minimum", minimumWords("1,000.00", "570.00"), 430],
      ],
    );

    // The list carries the same block.
    const [listed] = await invoicesOf(t(), key, contract.id);
    assert.deepEqual(listed!.projected, projected);

    // More usage lowers the top-up, never the subscription.
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 10 })]);
    const later = await getInvoice(t(), key, draft.number);
    assertDecimal(later.total, "270");
    assertDecimal(later.projected!.minimum_top_up, "230");
    assertDecimal(later.projected!.total, "1000");

    // Finalizing brings the draft up to date as projection does: it bills what `projected` said.
    const res = await t().call({ method: "POST", url: `${INVOICES}/${draft.number}/finalize`, key });
    expectStatus(res, 200);
    const issued = res.json();
    assertDecimal(issued.total, "1000");
    assert.equal(issued.projected, null, "an issued invoice has no projected block");
    assert.equal((await getInvoice(t(), key, draft.number)).projected, null);
    assert.equal((await invoicesOf(t(), key, contract.id))[0]!.projected, null);
  });

  it("is what projection then stores: after a projection, the draft's lines and its projected block agree", async () => {
    const { key, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { type: "subscription", name: "Platform fee", amount: "500.00" });
    await submitAccepted(t(), key, [usageEvent(contract.id)]);
    const before = (await invoiceFor(t(), key, contract.id)).projected!;
    const projection = await project(t(), key, contract.id);
    const after = await getInvoice(t(), key, projection.number);
    assertDecimal(after.total, String(projection.total));
    assertDecimal(after.total, "1000");
    assert.deepEqual(after.projected, before, "projecting changed nothing projected");
    assertDecimal(after.projected!.total, "1000");
  });

  it("bills a one-time fee once, on the first month's draft, and does not count it toward the minimum", async () => {
    const { key, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { type: "one_time", name: "Setup fee", amount: "1250.00" });
    await submitAccepted(t(), key, [usageEvent(contract.id)]);
    const march = await invoiceFor(t(), key, contract.id);
    assertDecimal(march.projected!.one_time_fees, "1250");
    assertDecimal(march.projected!.minimum_top_up, "980");
    assertDecimal(march.projected!.total, "2250");
    // March is projected: its draft now bills the fee, so April's projection does not.
    await project(t(), key, contract.id);
    t().clock.set(new Date(APRIL));
    await submitAccepted(t(), key, [usageEvent(contract.id, { timestamp: APRIL })]);
    const april = await invoiceFor(t(), key, contract.id, "2026-04-01");
    assertDecimal(april.projected!.one_time_fees, "0");
    assertDecimal(april.projected!.minimum_top_up, "980");
    assertDecimal(april.projected!.total, "1000");
  });

  it("bills a draft by the program in force on its month's last day, each company's own", async () => {
    const { key, contract } = await companyWithContract(t());
    const other = await companyWithContract(t());
    await addRule(t(), other.key, other.contract.id, { type: "subscription", name: "Other fee", amount: "9000.00" });
    // A subscription dated from the 20th of the month: in force on its last day.
    await addRule(t(), key, contract.id, {
      type: "subscription",
      name: "Support",
      amount: "100.00",
      effective_date: "2026-03-20",
    });
    await submitAccepted(t(), key, [usageEvent(contract.id)]);
    const draft = await invoiceFor(t(), key, contract.id);
    assert.deepEqual(
      draft.projected!.line_items.map((l) => [l.description, l.amount]),
      [
        ["Support", 100],
        [minimumWords("1,000.00", "120.00"), 880],
      ],
    );
  });
});
