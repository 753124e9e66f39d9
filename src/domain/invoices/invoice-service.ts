import type { Database } from "../../db/database.js";
import { requireScope } from "../kernel/actor.js";
import type { Tenancy } from "../kernel/tenancy.js";
import type { Clock } from "../kernel/clock.js";
import type { DraftInvoices } from "./lifecycle/draft-invoices.js";
import { createFinalizeInvoice } from "./lifecycle/finalize-invoice.js";
import { createInvoiceCollections } from "./collections/invoice-collections.js";
import { createInvoiceDocuments } from "./documents/invoice-documents.js";
import type { InvoiceWithLines } from "./invoice-schemas.js";
import { createInvoiceMessages } from "./delivery/invoice-messages.js";
import { createMailEngine, type MailSettings } from "./delivery/mail-engine.js";
import type { Mailer } from "../../platform/smtp-mailer.js";
import { createIssueDueDrafts } from "./lifecycle/issue-due-drafts.js";
import { createInvoiceReads } from "./list-invoices.js";
import { createPayInvoice } from "./collections/pay-invoice.js";
import { createProjectInvoice } from "./project-invoice.js";
import { createVoidInvoice } from "./lifecycle/void-invoice.js";

/**
 * The invoices service every surface uses: one file per verb (reads, projection, finalize, pay, void, the
 * documents, the worker's round), composed here.
 */
export function createInvoiceService(deps: {
  db: Database;
  clock: Clock;
  drafts: DraftInvoices;
  publicUrl: string;
  mailer: Mailer | null;
  mailSettings: MailSettings;
}) {
  const finalize = createFinalizeInvoice(deps);
  const mail = createMailEngine({ ...deps, settings: deps.mailSettings });
  return {
    ...createInvoiceReads(deps),
    project: createProjectInvoice(deps),

    /** POST /v1/billing/invoices/{number}/finalize: draft → issued; an issued or paid invoice answers unchanged. */
    async finalize(tenant: Tenancy, number: string): Promise<InvoiceWithLines> {
      requireScope(tenant, "invoices:write");
      return (await finalize(tenant, number)).invoice;
    },
    pay: createPayInvoice(deps),
    void: createVoidInvoice(deps),
    issueDue: createIssueDueDrafts({ ...deps, finalize }),
    ...createInvoiceDocuments(),
    ...createInvoiceCollections(deps),
    ...createInvoiceMessages(deps),
    /** The mail worker's round: reminders come due, then the messages due (mail-engine.ts). */
    queueReminders: mail.queueReminders,
    sendMessagesDue: mail.sendDue,
  };
}
