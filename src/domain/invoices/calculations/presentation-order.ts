// Step "order": the lines in the order an invoice shows them: subscriptions, one-time fees, usage, fees, the
// minimum true-up, then credits; within a kind by description, then by key, so that the same lines always read
// in the same order.
import type { LineKindName } from "../invoice-lines.js";
import type { InvoiceCalc } from "./invoice-calculation.js";

const KIND_ORDER: Record<LineKindName, number> = {
  subscription: 0,
  one_time: 1,
  usage: 2,
  fee: 3,
  minimum: 4,
  credit: 5,
};

export function presentationOrder(calc: InvoiceCalc): void {
  calc.lines.sort(
    (a, b) =>
      KIND_ORDER[a.line.kind] - KIND_ORDER[b.line.kind] ||
      a.line.description.localeCompare(b.line.description) ||
      a.key.localeCompare(b.key),
  );
}
