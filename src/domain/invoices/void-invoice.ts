import { forCompany } from "../../db/company-scope.js";
import type { Database } from "../../db/database.js";
import { requireScope, type Actor } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import * as repo from "./invoice-change-repository.js";
import type { InvoiceWithLines } from "./invoice-schemas.js";
import { changeInvoice } from "./change-invoice.js";

/** POST …/void: issued → void; a void invoice answers unchanged. */
export function createVoidInvoice({ db, clock }: { db: Database; clock: Clock }) {
  return async function voidInvoice(actor: Actor, number: string): Promise<InvoiceWithLines> {
    requireScope(actor, "invoices:write");
    const { invoice } = await changeInvoice(db, actor.companyId, number, "void", async (tx) => {
      const now = clock.now();
      await repo.voidInvoice(forCompany(tx, actor.companyId), number, now);
      return { updated_at: now };
    });
    return invoice;
  };
}
