import type { Tenancy } from "../kernel/tenancy.js";
import { forCompany } from "../../db/company-scope.js";
import type { Database } from "../../db/database.js";
import { requireScope } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import * as repo from "./invoice-change-repository.js";
import type { InvoiceWithLines } from "./invoice-schemas.js";
import { changeInvoice } from "./change-invoice.js";

/** POST …/void: issued → void; a void invoice answers unchanged. */
export function createVoidInvoice({ db, clock }: { db: Database; clock: Clock }) {
  return async function voidInvoice(tenant: Tenancy, number: string): Promise<InvoiceWithLines> {
    requireScope(tenant, "invoices:write");
    const { invoice } = await changeInvoice(tenant, clock, number, "void", async (scope) => {
      const now = clock.now();
      await repo.voidInvoice(scope, number, now);
      return { updated_at: now };
    });
    return invoice;
  };
}
