import type { OpenBook } from "../invoices/line-book.js";
import { Big, toDecimalString } from "../kernel/money.js";
import type { GrantRow } from "./credit-repository.js";

/** A grant as burning sees it, its balance changed in memory and saved with the transaction's lines. */
export interface GrantState {
  id: string;
  contractId: string;
  name: string;
  startsOn: string;
  expiresOn: string | null;
  metrics: ReadonlySet<string> | null;
  priority: number;
  seq: number;
  balance: Big;
  active: boolean;
}

/** A grant's movement in one transaction: what it burned (negative) or got back (positive) on one invoice. */
export interface Movement {
  grantId: string;
  invoiceNumber: string;
  amount: Big;
}

const ZERO = new Big(0);

export const grantState = (row: GrantRow): GrantState => ({
  id: row.id,
  contractId: row.contract_id,
  name: row.name,
  startsOn: row.starts_on,
  expiresOn: row.expires_on,
  metrics: row.metrics === null ? null : new Set(row.metrics),
  priority: row.priority,
  seq: Number(row.seq),
  balance: new Big(row.balance),
  active: row.status === "active",
});

/** Burning order: the lowest priority number first, then the one expiring first (none: last), then the oldest. */
function burnOrder(a: GrantState, b: GrantState): number {
  if (a.priority !== b.priority) return a.priority - b.priority;
  if (a.expiresOn !== b.expiresOn) {
    if (a.expiresOn === null) return 1;
    if (b.expiresOn === null) return -1;
    return a.expiresOn < b.expiresOn ? -1 : 1;
  }
  return a.seq - b.seq;
}

const min = (...values: Big[]): Big => values.reduce((m, v) => (v.lt(m) ? v : m));
const max = (...values: Big[]): Big => values.reduce((m, v) => (v.gt(m) ? v : m));

/**
 * The credit grants of the contracts of one transaction (docs/api.md, "Credits"), burned as their usage is priced
 * on a book (usage/ingest/price.ts, `chargeOnBook`). Two rules hold after every event, on every draft:
 * - a grant's balance never goes below zero, and what it covers of a draft never exceeds the draft's usage of
 *   its metrics; all the grants together never cover more than the draft's usage they may pay for;
 * - a positive usage charge is paid from the grants valid on the event's day and for its metric, in burning
 *   order, each up to its balance; a charge that lowers a line (a volume tier) gives back what no longer has
 *   usage to cover, last grant first.
 * Pure but for the book it records credit lines on; `movements` and `changed` are what the transaction saves.
 */
export function openWallet(grants: readonly GrantState[]) {
  const byContract = new Map<string, GrantState[]>();
  for (const grant of grants) {
    const list = byContract.get(grant.contractId) ?? [];
    list.push(grant);
    byContract.set(grant.contractId, list);
  }
  for (const list of byContract.values()) list.sort(burnOrder);
  const moves = new Map<string, Movement>();
  const changed = new Set<GrantState>();

  const move = (grant: GrantState, invoiceNumber: string, amount: Big) => {
    const key = `${grant.id}|${invoiceNumber}`;
    const sofar = moves.get(key);
    moves.set(key, { grantId: grant.id, invoiceNumber, amount: (sofar?.amount ?? ZERO).plus(amount) });
    grant.balance = grant.balance.plus(amount);
    changed.add(grant);
  };

  /** The metrics any of these grants pays for (null: every metric). */
  const unionOf = (list: readonly GrantState[]): ReadonlySet<string> | null => {
    if (list.some((g) => g.metrics === null)) return null;
    const union = new Set<string>();
    for (const g of list) for (const m of g.metrics!) union.add(m);
    return union;
  };

  return {
    /** Whether the contract has grants: only then is its usage credited. */
    has(contractId: string): boolean {
      return byContract.has(contractId);
    },

    /** A draft priced again gives back what its credit lines held (`OpenBook.clearRated`), before its events burn again. */
    giveBack(contractId: string, invoiceNumber: string, credits: ReadonlyMap<string, Big>): void {
      for (const grant of byContract.get(contractId) ?? []) {
        const credit = credits.get(grant.id);
        if (credit && !credit.eq(0)) move(grant, invoiceNumber, credit);
      }
    },

    /** After a usage charge is recorded on the book: the grants' share of it, on the draft's credit lines. */
    apply(
      book: OpenBook,
      invoiceNumber: string,
      contractId: string,
      periodStart: string,
      day: string,
      metric: string,
      charge: Big,
    ): void {
      const list = byContract.get(contractId);
      if (!list) return;
      const covered = (metrics: ReadonlySet<string> | null) =>
        max(book.usageTotal(contractId, periodStart, metrics), ZERO);
      const coverable = covered(unionOf(list));
      let credited = list.reduce((sum, g) => sum.plus(book.creditOf(contractId, periodStart, g.id)), ZERO);
      // Credit beyond the usage it may cover goes back, last grant first.
      for (let i = list.length - 1; i >= 0; i--) {
        const grant = list[i]!;
        const credit = book.creditOf(contractId, periodStart, grant.id);
        if (credit.lte(0)) continue;
        const excess = min(credit, max(credit.minus(covered(grant.metrics)), credited.minus(coverable), ZERO));
        if (excess.gt(0)) {
          book.recordCredit(contractId, periodStart, grant.id, grant.name, excess.neg());
          move(grant, invoiceNumber, excess);
          credited = credited.minus(excess);
        }
      }
      let remaining = charge;
      for (const grant of list) {
        if (remaining.lte(0)) break;
        if (!grant.active || grant.balance.lte(0) || day < grant.startsOn) continue;
        if (grant.expiresOn !== null && day > grant.expiresOn) continue;
        if (grant.metrics !== null && !grant.metrics.has(metric)) continue;
        const room = min(
          covered(grant.metrics).minus(book.creditOf(contractId, periodStart, grant.id)),
          coverable.minus(credited),
        );
        const take = min(remaining, grant.balance, room);
        if (take.lte(0)) continue;
        book.recordCredit(contractId, periodStart, grant.id, grant.name, take);
        move(grant, invoiceNumber, take.neg());
        credited = credited.plus(take);
        remaining = remaining.minus(take);
      }
    },

    /**
     * The movements of this transaction, net per grant and invoice (zero ones left out), as ledger entries of
     * `kind`: `burn` for usage rated or a month priced again, `void` for a voided event's month priced without it.
     */
    movements(
      kind: "burn" | "void" = "burn",
    ): { grantId: string; kind: "burn" | "void"; amount: string; invoiceNumber: string }[] {
      return [...moves.values()]
        .filter((m) => !m.amount.eq(0))
        .map((m) => ({
          grantId: m.grantId,
          kind,
          amount: toDecimalString(m.amount),
          invoiceNumber: m.invoiceNumber,
        }));
    },

    /** The grants whose balance changed, with it. */
    balances(): { id: string; balance: string }[] {
      return [...changed].map((g) => ({ id: g.id, balance: toDecimalString(g.balance) }));
    },
  };
}

export type CreditWallet = ReturnType<typeof openWallet>;
