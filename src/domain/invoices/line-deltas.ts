import type { Big } from "../kernel/money.js";
import type { Charge } from "./invoice-lines.js";

type LineKind = Charge["kind"];

/** What grouping needs of a rated event on the one-round-trip path. */
export interface GroupableEvent {
  contractId: string;
  pricingVersion: number;
  /** The contract's newest program version when the event was judged (the write checks it is still so). */
  programHead: number;
  periodStart: string;
  periodEnd: string;
  lineKey: string;
  kind: LineKind;
  ruleId: string;
  metric: string;
  description: string;
  unitPrice: string | null;
  /** The event's quantity and charge as decimals (the strings stored are the same numbers). */
  quantityDecimal: Big;
  chargeDecimal: Big;
}

/** One draft invoice to find: a contract, the program version the events were rated with, a period. */
export interface PairDelta {
  contractId: string;
  version: number;
  /** The contract's newest program version when its events were judged. */
  head: number;
  periodStart: string;
  periodEnd: string;
}

/** What the events of one call add to one line of one draft. */
export interface LineDelta {
  /** Index into the pairs (0-based here; the database function's arrays are 1-based). */
  pair: number;
  key: string;
  kind: LineKind;
  ruleId: string;
  metric: string;
  description: string;
  unitPrice: string | null;
  quantity: Big;
  charge: Big;
}

export interface GroupedBatch {
  pairs: PairDelta[];
  lines: LineDelta[];
  /** For each event, in order, the index of its line (0-based). */
  eventLines: number[];
}

/**
 * Sums a rated batch by invoice line (migrations/functions/billing_ingest_usage_lines.sql), so that the database folds one delta per line
 * instead of grouping every event. Pure; sums are exact (big.js). A line's attributes are those of its
 * first event: a usage line's key fixes its rule and unit price (hence metric and description), and a fee
 * line's key fixes its metric (fees have no unit price); only a fee line's rule can differ between events,
 * and it is informational. The database takes each event's metric and applied rate from its line, so an
 * event that disagrees with its line in those is a bug here, and throws.
 * The pair includes the program version, so that events rated against two versions of one contract are
 * never folded together: the database refuses the stale one before anything is written.
 */
export function groupByLine(events: readonly GroupableEvent[]): GroupedBatch {
  const pairs: PairDelta[] = [];
  const lines: LineDelta[] = [];
  const eventLines: number[] = new Array(events.length);
  const pairIndex = new Map<string, number>();
  const lineIndex = new Map<string, number>();
  for (let i = 0; i < events.length; i++) {
    const e = events[i]!;
    // "\n" cannot occur in a contract id (control characters are refused) nor in a date or a number.
    const pairKey = `${e.contractId}\n${e.pricingVersion}\n${e.periodStart}`;
    let pair = pairIndex.get(pairKey);
    if (pair === undefined) {
      pair = pairs.length;
      pairIndex.set(pairKey, pair);
      pairs.push({
        contractId: e.contractId,
        version: e.pricingVersion,
        head: e.programHead,
        periodStart: e.periodStart,
        periodEnd: e.periodEnd,
      });
    }
    const key = `${pair}\n${e.lineKey}`;
    let line = lineIndex.get(key);
    if (line === undefined) {
      line = lines.length;
      lineIndex.set(key, line);
      lines.push({
        pair,
        key: e.lineKey,
        kind: e.kind,
        ruleId: e.ruleId,
        metric: e.metric,
        description: e.description,
        unitPrice: e.unitPrice,
        quantity: e.quantityDecimal,
        charge: e.chargeDecimal,
      });
    } else {
      const l = lines[line]!;
      // The database takes an event's metric and applied rate from its line (migrations/functions/billing_ingest_usage_lines.sql).
      if (e.metric !== l.metric || e.unitPrice !== l.unitPrice || e.kind !== l.kind) {
        throw new Error(`event on line ${e.lineKey} differs from the line in metric, unit price or kind`);
      }
      l.quantity = l.quantity.plus(e.quantityDecimal);
      l.charge = l.charge.plus(e.chargeDecimal);
    }
    eventLines[i] = line;
  }
  return { pairs, lines, eventLines };
}
