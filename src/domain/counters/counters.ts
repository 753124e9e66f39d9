import type { CompanyScope } from "../../db/company-scope.js";
import { addToCounter } from "./counter-repository.js";

/** The per-company counters: contract numbers (`CTR-…`; `CN-…` before: docs/decisions.md, "Document numbers"), invoice numbers and credit note numbers. */
export type CounterName = "contract_number" | "invoice_number" | "credit_note_number";

/**
 * Takes the next `count` numbers of a company's counter, in the caller's transaction, and returns the last
 * of them (the first is `last - count + 1`; numbers start at 1). The counter row stays locked until the
 * transaction ends, so numbers have no gaps but for rolled-back transactions; `count` 0 takes only the lock.
 */
export async function nextNumbers(tx: CompanyScope, name: CounterName, count: number): Promise<number> {
  return addToCounter(tx, name, count);
}
