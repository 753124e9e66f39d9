import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { CompanyScope } from "../../db/company-scope.js";
import type { CompanyData } from "../kernel/tenancy.js";
import { Big } from "../kernel/money.js";
import type { DraftInvoice, DraftInvoices } from "./lifecycle/draft-invoices.js";
import type { Line } from "./invoice-lines.js";
import { createLineBook, RetryTransaction } from "./line-book.js";
import { rule } from "../../../test/fixtures/pricing-rules.js";

const capped = rule({ id: "r1", amount: "2", monthly_cap: "10" });
const wanted = {
  contractId: "k1",
  periodStart: "2026-03-01",
  periodEnd: "2026-03-31",
  currency: "USD",
  paymentTermsDays: 30,
};

/** A company whose transactions run their work at once, on a scope no statement reaches. */
const company = {
  companyId: "c",
  transaction: (work: (tx: CompanyScope) => Promise<unknown>) => work({} as CompanyScope),
} as unknown as CompanyData;

const usageLine = (cappedTotal: string): Line => ({
  key: "usage|r1|2",
  kind: "usage",
  ruleId: "r1",
  metric: "m",
  description: "m usage",
  quantity: new Big(1),
  rate: new Big(2),
  chargeTotal: new Big(cappedTotal),
  cappedTotal: new Big(cappedTotal),
  tiers: null,
});

/** A book over one draft held in memory: `status` its invoice's, `lines` what it holds; `saved` what was written. */
function bookOver(status: string, lines: Line[] = []) {
  const saved: DraftInvoice[][] = [];
  const drafts = {
    lock: async () => {
      const draft: DraftInvoice = {
        number: "INV-000001",
        contractId: "k1",
        periodStart: "2026-03-01",
        currency: "USD",
        status,
        minimum: null,
        projectedAt: null,
        lines: new Map(lines.map((l) => [l.key, l])),
        original: new Map(),
      };
      return new Map([["k1|2026-03-01", draft]]);
    },
    save: async (_tx: CompanyScope, locked: Iterable<DraftInvoice>) => void saved.push([...locked]),
    ensure: async () => new Set<string>(),
  } as unknown as DraftInvoices;
  return { book: createLineBook({ drafts }), saved };
}

const charge = (amount: string) => ({
  kind: "usage" as const,
  rule: capped,
  metric: "m",
  quantity: new Big(1),
  unitPrice: new Big(2),
  charge: new Big(amount),
  cappedCharge: new Big(amount),
});

describe("line book", () => {
  it("places charges at a rule's own rate on one shared line, others by their own rate, fees by metric", () => {
    const { book } = bookOver("draft");
    const atRate = { kind: "usage" as const, rule: capped, metric: "m", unitPrice: new Big(2) };
    assert.equal(book.placeOf(atRate, true), book.placeOf(atRate, true));
    assert.deepEqual(book.placeOf(atRate, true), { key: "usage|r1|2", description: "m usage", unitPrice: "2" });
    assert.deepEqual(book.placeOf({ ...atRate, unitPrice: new Big("7.50") }, false), {
      key: "usage|r1|7.5",
      description: "m usage",
      unitPrice: "7.5",
    });
    assert.deepEqual(book.placeOf({ kind: "fee", rule: capped, metric: "m", unitPrice: null }, false), {
      key: "fee|m",
      description: "m fees",
      unitPrice: null,
    });
  });

  it("records charges on the locked draft, the rule's capped total growing with each, and saves once", async () => {
    const { book, saved } = bookOver("draft", [usageLine("3")]);
    const seen = await book.record(company, [wanted], async (_tx, open) => {
      const before = open.totalsSoFar("k1", "2026-03-01", "r1").capped.toFixed();
      const key = open.record("k1", "2026-03-01", charge("4"));
      return [
        open.draftNumber("k1", "2026-03-01"),
        before,
        key,
        open.totalsSoFar("k1", "2026-03-01", "r1").capped.toFixed(),
      ];
    });
    assert.deepEqual(seen, ["INV-000001", "3", "usage|r1|2", "7"]);
    assert.equal(saved.length, 1);
    assert.equal(saved[0]?.[0]?.lines.get("usage|r1|2")?.chargeTotal.toFixed(), "7");
  });

  it("a closed period has no draft number, and nothing recorded is nothing saved", async () => {
    const { book, saved } = bookOver("issued");
    const number = await book.record(company, [wanted], async (_tx, open) => open.draftNumber("k1", "2026-03-01"));
    assert.equal(number, null);
    assert.equal(saved.length, 0);
  });

  it("a transaction that asks to start over saves nothing of its first attempt", async () => {
    const { book, saved } = bookOver("draft");
    let attempts = 0;
    await book.record(company, [wanted], async (_tx, open) => {
      open.record("k1", "2026-03-01", charge("1"));
      if (++attempts === 1) throw new RetryTransaction("clash");
    });
    assert.equal(attempts, 2);
    assert.equal(saved.length, 1);
    assert.equal(saved[0]?.[0]?.lines.get("usage|r1|2")?.chargeTotal.toFixed(), "1");
  });
});
