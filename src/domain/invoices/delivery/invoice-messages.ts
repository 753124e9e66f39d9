import type { Database } from "../../../db/database.js";
import { type InvoiceStatus, requireMay } from "../invoice-states.js";
import { requireScope } from "../../kernel/actor.js";
import type { Clock } from "../../kernel/clock.js";
import { NotFoundError } from "../../kernel/errors.js";
import { companyData, type Tenancy } from "../../kernel/tenancy.js";
import { HOSTED_TOKEN, hostedTokenSha256, newHostedLink } from "./invoice-delivery.js";
import { invoiceDocumentInput, invoicePdfOf, usageStatementOf } from "../documents/invoice-documents.js";
import type { InvoicePdfInput } from "../documents/invoice-words.js";
import { invoiceLineFacts } from "../documents/line-facts.js";
import * as messages from "./invoice-message-repository.js";
import type { InvoiceMessage } from "./invoice-message-schemas.js";
import { billStored, presentWithLines } from "../invoice-presenter.js";
import * as reads from "../invoice-read-repository.js";
import type { InvoiceWithLines } from "../invoice-schemas.js";

/** The most messages an invoice's log answers: the newest. */
const LOG_LIMIT = 100;

function presentMessage(row: messages.MessageRow): InvoiceMessage {
  return {
    object: "invoice_message",
    id: row.id,
    invoice: row.invoice_number,
    kind: row.kind,
    reminder_day: row.reminder_day,
    to: row.recipient,
    status: row.status,
    attempts: row.attempts,
    last_error: row.last_error,
    next_attempt_at: row.next_attempt_at?.toISOString() ?? null,
    sent_at: row.sent_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

/**
 * Delivering invoices by hand and by link (docs/api.md, "Delivery"): an invoice's message log, sending it again
 * now, revoking its hosted link, and the hosted page's reads, which take the link's token instead of a key.
 */
export function createInvoiceMessages({ db, clock, publicUrl }: { db: Database; clock: Clock; publicUrl: string }) {
  /** The invoice a hosted page's token names, or 404 (a wrong, revoked or malformed token alike). */
  async function hosted(token: string) {
    const found = HOSTED_TOKEN.test(token)
      ? await messages.findInvoiceByHostedToken(db, hostedTokenSha256(token))
      : undefined;
    if (!found) throw new NotFoundError("invoice");
    return { scope: companyData(db, found.company_id).data, number: found.number };
  }

  return {
    /** GET …/messages: the invoice's messages, newest first. */
    async messages(tenant: Tenancy, number: string): Promise<InvoiceMessage[]> {
      requireScope(tenant, "invoices:read");
      if (!(await reads.findInvoiceSeq(tenant.data, number))) throw new NotFoundError("invoice");
      return (await messages.listMessages(tenant.data, number, LOG_LIMIT)).map(presentMessage);
    },

    /**
     * POST …/send: queues the invoice's email to its customer now (whatever its delivery setting); the mail
     * worker sends it. A draft or a void invoice is refused (409).
     */
    async send(tenant: Tenancy, number: string): Promise<InvoiceMessage> {
      requireScope(tenant, "invoices:write");
      return tenant.transaction(async (tx) => {
        const invoice = await reads.findInvoice(tx, number);
        if (!invoice) throw new NotFoundError("invoice");
        requireMay(invoice.status as InvoiceStatus, "send");
        const queued = await messages.queueMessage(tx, {
          number,
          kind: "manual",
          at: clock.now(),
          onlyIfEmailDelivery: false,
        });
        if (!queued) throw new NotFoundError("invoice");
        return presentMessage(queued);
      });
    },

    /** POST …/hosted-link/revoke: a new link replaces the invoice's; the old one answers 404 from now on. */
    async revokeHostedLink(tenant: Tenancy, number: string): Promise<InvoiceWithLines> {
      requireScope(tenant, "invoices:write");
      return tenant.transaction(async (tx) => {
        const invoice = await reads.findInvoiceDocument(tx, number);
        if (!invoice) throw new NotFoundError("invoice");
        requireMay(invoice.status as InvoiceStatus, "link");
        const link = newHostedLink(publicUrl);
        await messages.setHostedLink(tx, number, link);
        const row = { ...invoice, hosted_url: link.url };
        const billed = billStored(row);
        return presentWithLines(row, billed, null, await invoiceLineFacts(tx, row, billed));
      });
    },

    /**
     * The hosted page's invoice: what its page shows (no key: the token is the capability). The same document the
     * PDF is made from (invoiceDocumentInput: the parties as issued, the figures at issue, the payments and
     * credit notes as they stand now).
     */
    async hostedInvoice(token: string): Promise<HostedInvoice> {
      const { scope, number } = await hosted(token);
      const row = await reads.findInvoiceDocument(scope, number);
      if (!row) throw new NotFoundError("invoice");
      return { document: await invoiceDocumentInput(scope, row) };
    },

    /** The hosted page's PDF: the same bytes as GET …/pdf at the same instant. */
    async hostedPdf(token: string): Promise<{ filename: string; pdf: Buffer }> {
      const { scope, number } = await hosted(token);
      return invoicePdfOf(scope, number);
    },

    /** The hosted page's usage statement: the same as GET …/usage.csv. */
    async hostedUsageStatement(token: string) {
      const { scope, number } = await hosted(token);
      return usageStatementOf(scope, number);
    },
  };
}

/** What the hosted page shows: the document its PDF is made from. */
export interface HostedInvoice {
  document: InvoicePdfInput;
}
