// The document processes' entry (document-pool.ts starts them): every PDF the service renders, every logo it
// normalises and every agreement's terms it reads are made here, off the service's main thread. The renderers are the domain's own pure functions
// of plain inputs: the same input gives the same bytes here as anywhere.
import { serveChildJobs } from "../../platform/child-jobs.js";
import { normaliseLogo } from "../account/logo-normaliser.js";
import { renderAgreementPdf } from "../contracts/agreement-pdf.js";
import { extractTerms } from "../contracts/extraction/extract-terms.js";
import { renderCreditNotePdf } from "../invoices/documents/credit-note-pdf.js";
import { renderInvoicePdf } from "../invoices/documents/invoice-pdf.js";

serveChildJobs({
  invoicePdf: renderInvoicePdf,
  creditNotePdf: renderCreditNotePdf,
  agreementPdf: renderAgreementPdf,
  logo: normaliseLogo,
  extractTerms: ({
    items,
    context,
  }: {
    items: Parameters<typeof extractTerms>[0];
    context: Parameters<typeof extractTerms>[1];
  }) => extractTerms(items, context),
});
