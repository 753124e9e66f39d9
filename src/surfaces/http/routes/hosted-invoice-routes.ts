import type { FastifyReply } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { HostedInvoice } from "../../../domain/invoices/delivery/invoice-messages.js";
import { invoiceWords, type InvoiceWords } from "../../../domain/invoices/documents/invoice-words.js";
import { NotFoundError } from "../../../domain/kernel/errors.js";
import type { Services } from "../../../domain/services.js";
import { html, type SafeHtml } from "../../dashboard/html.js";
import { sendPdf, sendUsageStatement } from "../send-documents.js";

// The dashboard's policy (its stylesheet is public): nothing runs, nothing is framed, no form goes anywhere.
const CSP = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

const params = z.object({ token: z.string().max(100) });

/** A customer's page is theirs alone: not indexed, not cached, not framed (and, as every answer, no referrer). */
const privately = (reply: FastifyReply): FastifyReply =>
  reply.header("x-robots-tag", "noindex, nofollow").header("cache-control", "no-store");

function shell(title: string, content: SafeHtml, mainClass = "auth"): string {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="stylesheet" href="/assets/dashboard.css">
</head>
<body>
<main id="content" class="${mainClass}">
${content}
</main>
</body>
</html>`.value;
}

/** Lines of text, one after another (an address, a block of instructions). */
const lines = (texts: readonly string[]): SafeHtml =>
  html`${texts.map((t, i) => html`${i > 0 ? html`<br>` : ""}${t}`)}`;

/** The seller's logo, inline (the page's policy allows data: images, and the token page loads nothing else). */
const logoImage = (logo: HostedInvoice["document"]["seller"]["logo"], name: string): SafeHtml =>
  logo === null
    ? html``
    : html`<img src="data:${logo.contentType};base64,${Buffer.from(logo.bytes).toString("base64")}" alt="${name}">`;

/** The line table: the PDF's rows (invoice-words.ts), a row that explains the one above it indented. */
function lineTable(words: InvoiceWords): SafeHtml {
  if (words.lines.length === 0) return html`<p>${words.noLines}</p>`;
  const [description, quantity, unitPrice, amount] = words.lineHeaders;
  return html`<div class="lines-box"><table class="lines"><caption class="visually-hidden">Line items</caption>
<thead><tr><th scope="col">${description}</th><th scope="col" class="num wide-only">${quantity}</th><th scope="col" class="num wide-only">${unitPrice}</th><th scope="col" class="num">${amount}</th></tr></thead>
<tbody>${words.lines.map(([text = "", qty = "", unit = "", money = ""]) => {
    const sub = text.startsWith(" ");
    // On a phone the quantity and unit price columns give way to one line under the description (the CSS).
    const narrow = [qty, unit].filter((cell) => cell !== "").join(" × ");
    return html`<tr${sub ? html` class="sub"` : ""}><td${sub ? html` class="sub"` : ""}>${text.trim()}${narrow ? html`<span class="narrow-only">${narrow}</span>` : ""}</td><td class="num wide-only">${qty}</td><td class="num wide-only">${unit}</td><td class="num amount">${money}</td></tr>`;
  })}</tbody></table></div>`;
}

/**
 * The hosted page: what the PDF says (invoiceWords over the same document), as HTML. The seller with its logo,
 * the status, the customer and the reference, the facts (the invoices it replaces or was replaced by among them),
 * the lines, the totals with each payment and credit note and the amount due, how to pay, the footer.
 */
function invoicePage(token: string, hosted: HostedInvoice): string {
  const { document } = hosted;
  const words = invoiceWords(document);
  const base = `/i/${token}`;
  const [sellerName = "", ...sellerRest] = words.seller;
  const last = words.totals.length - 1;
  const content = html`<div class="card">
<header class="seller"><p><strong>${sellerName}</strong>${sellerRest.length > 0 ? html`<br>${lines(sellerRest)}` : ""}</p>${logoImage(document.seller.logo, sellerName)}</header>
${words.banner ? html`<p class="banner" role="status">${words.banner}</p>` : ""}
<h1>${words.title}</h1>
<p>${words.subtitle}</p>
<p><strong>${words.status}</strong></p>
<div class="parties">${words.parties.map((party) => html`<section><h2 class="label">${party.label}</h2><p>${lines(party.lines)}</p></section>`)}</div>
<dl class="facts">${words.facts.map(([label, value]) => html`<dt>${label}</dt><dd>${value}</dd>`)}</dl>
<h2>Charges</h2>
${lineTable(words)}
<dl class="totals">${words.totals.map(([label, value], i) => html`<dt${i === last ? html` class="due"` : ""}>${label}</dt><dd${i === last ? html` class="due"` : ""}>${value}</dd>`)}</dl>
${words.paymentInstructions ? html`<h2>How to pay</h2><p class="instructions">${words.paymentInstructions}</p>` : ""}
${words.footerNote ? html`<p class="instructions">${words.footerNote}</p>` : ""}
<p class="actions"><a href="${base}/pdf">Download the PDF</a> · <a href="${base}/usage.csv">Download the usage statement (CSV)</a></p>
</div>`;
  return shell(`${words.title} from ${sellerName}`, content, "hosted");
}

const NOT_FOUND = shell(
  "Invoice not found",
  html`<div class="card"><h1>Invoice not found</h1><p>This invoice link is not valid: it may be mistyped, or it was replaced by a newer one. Ask the sender for the current link.</p></div>`,
);

/**
 * The hosted invoice page (docs/api.md, "Hosted invoice page"): no key, the unguessable token in the URL is the
 * capability. A wrong, malformed or revoked token is the same 404 page. Not in the OpenAPI document: it is a
 * page for people, not an operation.
 */
export function hostedInvoiceRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    const notFound = (reply: FastifyReply, error: unknown) => {
      if (!(error instanceof NotFoundError)) throw error;
      return privately(reply)
        .code(404)
        .type("text/html; charset=utf-8")
        .header("content-security-policy", CSP)
        .send(NOT_FOUND);
    };

    app.get("/i/:token", { schema: { hide: true, params } }, async (request, reply) => {
      try {
        const hosted = await services.invoices.hostedInvoice(request.params.token);
        return privately(reply)
          .type("text/html; charset=utf-8")
          .header("content-security-policy", CSP)
          .send(invoicePage(request.params.token, hosted));
      } catch (error) {
        return notFound(reply, error);
      }
    });

    app.get("/i/:token/pdf", { schema: { hide: true, params } }, async (request, reply) => {
      try {
        return sendPdf(privately(reply), await services.invoices.hostedPdf(request.params.token), "attachment");
      } catch (error) {
        return notFound(reply, error);
      }
    });

    app.get("/i/:token/usage.csv", { schema: { hide: true, params } }, async (request, reply) => {
      try {
        return sendUsageStatement(privately(reply), await services.invoices.hostedUsageStatement(request.params.token));
      } catch (error) {
        return notFound(reply, error);
      }
    });
  };
}
