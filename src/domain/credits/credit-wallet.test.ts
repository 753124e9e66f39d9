import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { bookInMemory } from "../invoices/line-book.js";
import { Big } from "../kernel/money.js";
import { chargeOnBook } from "../usage/ingest/price.js";
import { rule, ratable } from "../../../test/fixtures/pricing-rules.js";
import { openWallet, type GrantState } from "./credit-wallet.js";

const grant = (fields: Partial<Omit<GrantState, "balance">> & { id: string; balance: string }): GrantState => ({
  contractId: "k",
  name: fields.id,
  startsOn: "2026-03-01",
  expiresOn: null,
  metrics: null,
  priority: 50,
  seq: 1,
  active: true,
  ...fields,
  balance: new Big(fields.balance),
});

interface Step {
  metric?: string;
  quantity: string;
  day?: string;
}

/**
 * Prices `steps` in order on one draft (rules: m at 1.00 a unit, n at 1.00, v a volume rule 2.00 up to 10 then
 * 1.00 for all) with `grants`; answers each grant's balance and credit line, and the ledger's net movement.
 */
function run(grants: GrantState[], steps: Step[]) {
  const { book, lines } = bookInMemory("k", "2026-03-01", "USD");
  const wallet = openWallet(grants);
  const rules = {
    m: rule({ id: "m", metric: "m", amount: "1" }),
    n: rule({ id: "n", metric: "n", amount: "1" }),
    v: rule({
      id: "v",
      metric: "v",
      model: "volume",
      tiers: [
        { up_to: "10", unit_amount: "2", flat_amount: null },
        { up_to: null, unit_amount: "1", flat_amount: null },
      ],
    }),
  } as const;
  for (const s of steps) {
    const metric = (s.metric ?? "m") as keyof typeof rules;
    chargeOnBook(book, "k", "2026-03-01", ratable({ metric, quantity: new Big(s.quantity) }), rules[metric], {
      wallet,
      invoiceNumber: "INV-1",
      day: s.day ?? "2026-03-15",
    });
  }
  const credit = new Map([...lines()].filter((l) => l.kind === "credit").map((l) => [l.key, l.chargeTotal.toFixed()]));
  return {
    balances: Object.fromEntries(grants.map((g) => [g.id, g.balance.toFixed()])),
    credit: Object.fromEntries(credit),
    moved: Object.fromEntries(wallet.movements().map((m) => [m.grantId, m.amount])),
  };
}

describe("credit wallet (pure, on an in-memory draft)", () => {
  const cases: { name: string; grants: GrantState[]; steps: Step[]; balances: Record<string, string> }[] = [
    {
      name: "one grant pays each charge up to its balance, never below zero",
      grants: [grant({ id: "a", balance: "100" })],
      steps: [{ quantity: "30" }, { quantity: "50" }, { quantity: "40" }],
      balances: { a: "0" },
    },
    {
      name: "the lower priority number burns first",
      grants: [
        grant({ id: "late", balance: "100", seq: 1 }),
        grant({ id: "first", balance: "20", priority: 10, seq: 2 }),
      ],
      steps: [{ quantity: "30" }],
      balances: { late: "90", first: "0" },
    },
    {
      name: "at equal priority the one expiring first, then the older",
      grants: [
        grant({ id: "never", balance: "10", seq: 1 }),
        grant({ id: "soon", balance: "10", expiresOn: "2026-03-31", seq: 3 }),
        grant({ id: "older", balance: "10", expiresOn: "2026-04-30", seq: 2 }),
      ],
      steps: [{ quantity: "15" }],
      balances: { never: "10", soon: "0", older: "5" },
    },
    {
      name: "a grant pays only for its metrics",
      grants: [grant({ id: "n-only", balance: "10", metrics: new Set(["n"]) })],
      steps: [{ quantity: "5" }, { metric: "n", quantity: "3" }],
      balances: { "n-only": "7" },
    },
    {
      name: "a grant pays only on its days",
      grants: [grant({ id: "march-20", balance: "10", startsOn: "2026-03-20", expiresOn: "2026-03-25" })],
      steps: [
        { quantity: "1", day: "2026-03-19" },
        { quantity: "2", day: "2026-03-20" },
        { quantity: "4", day: "2026-03-26" },
      ],
      balances: { "march-20": "8" },
    },
    {
      name: "an inactive (expired) grant pays nothing",
      grants: [grant({ id: "expired", balance: "10", active: false })],
      steps: [{ quantity: "5" }],
      balances: { expired: "10" },
    },
    {
      name: "a volume tier that lowers the month gives back what no usage is left to cover",
      grants: [grant({ id: "a", balance: "100" })],
      steps: [
        { metric: "v", quantity: "8" },
        { metric: "v", quantity: "4" },
      ],
      balances: { a: "88" },
    },
    {
      name: "exact to twelve decimals",
      grants: [grant({ id: "a", balance: "0.01" })],
      steps: [{ quantity: "0.000000000007" }, { quantity: "0.009999999993" }, { quantity: "1" }],
      balances: { a: "0" },
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const result = run(c.grants, c.steps);
      assert.deepEqual(result.balances, c.balances);
      for (const g of c.grants) {
        // The grant's credit line holds exactly what it gave: minus its net movement in the ledger.
        const line = result.credit[`credit|${g.id}`] ?? "0";
        assert.equal(new Big(line).toFixed(), new Big(result.moved[g.id] ?? "0").toFixed(), g.id);
      }
    });
  }
});
