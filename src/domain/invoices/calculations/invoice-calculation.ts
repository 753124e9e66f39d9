// Building an invoice's figures is an ordered list of calculations (invoice-calculations.ts), each a small pure
// step over one working state, this file's InvoiceCalc: the stored lines go in, the billed lines and totals come
// out. A step reads what the steps before it left and writes its own part; none reaches outside the state. Adding
// a step (a tax rule, a ledger posting's figures) is a file beside these and one line in the list.
import type { Big } from "../../kernel/money.js";
import type { MinimumTerm } from "../../contracts/minimum-terms.js";
import type { Line, LineKindName, TierSum } from "../invoice-lines.js";

/** A line as the invoice shows it (invoice-figures.ts says how each figure is made). */
export interface BilledLine {
  kind: LineKindName;
  ruleId: string | null;
  metric: string | null;
  description: string;
  quantity: Big;
  unitPrice: Big;
  amount: Big;
  /** Of a graduated or volume rule's line: the tiers reached, exact. Absent on every other line. */
  tiers?: TierSum[];
  /** With `tiers`, when a monthly cap cut the line: charge total − Σ tier amounts (exact, negative). */
  capAdjustment?: Big;
  /** Of a minimum true-up line: the commitment and what of the month counted toward it (the line tops up the rest). */
  minimum?: { commitment: Big; counted: Big };
  /** Of a pass-through rule's line: true. */
  passThrough?: true;
  /**
   * A usage line's events and, when a cap cut it, its uncapped amount: not calculated here (documents/line-facts.ts
   * reads them from the events), kept with the figures at issue so that an issued or void invoice keeps them.
   */
  eventCount?: number;
  uncapped?: Big;
}

/** Every figure of an invoice. */
export interface BilledInvoice {
  /** In presentation order: subscriptions, one-time fees, usage, fees, then the minimum true-up, then credits. */
  lines: BilledLine[];
  subtotal: Big;
  tax: Big;
  total: Big;
}

/** The working state of the calculations. */
export interface InvoiceCalc {
  /** What the invoice is built from: its stored lines, its monthly commitments (null: none), its currency. */
  readonly stored: readonly Line[];
  readonly minimum: readonly MinimumTerm[] | null;
  readonly currency: string;
  /** The billed lines so far, each with its key (a stored line's, or the step's own: `minimum`). */
  lines: { key: string; line: BilledLine }[];
  /** Σ of the amounts of every line that charges (all but credits). */
  charges: Big;
  /** Σ of the credit lines' amounts (0 or less). */
  credits: Big;
  subtotal: Big;
  tax: Big;
  total: Big;
}

/** One step: reads the state the steps before it left, writes its own part of it. */
export type InvoiceCalculation = (calc: InvoiceCalc) => void;
