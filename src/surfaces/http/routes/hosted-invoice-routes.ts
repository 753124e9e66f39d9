import type { FastifyReply } from "fastify";
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import type { HostedInvoice } from "../../../domain/invoices/delivery/invoice-messages.js";
import { NotFoundError } from "../../../domain/kernel/errors.js";
import type { Services } from "../../../domain/services.js";
import { html, type SafeHtml } from "../../dashboard/html.js";
import { decimal, money } from "../../dashboard/layout.js";
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

function shell(title: string, content: SafeHtml): string {
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
<main id="content" class="auth">
${content}
</main>
</body>
</html>`.value;
}

function invoicePage(token: string, hosted: HostedInvoice): string {
  const { invoice } = hosted;
  const currency = invoice.currency;
  const base = `/i/${token}`;
  const lines = html`<table><caption>Line items</caption>
<thead><tr><th scope="col">Description</th><th scope="col" class="num">Quantity</th><th scope="col" class="num">Unit price</th><th scope="col" class="num">Amount</th></tr></thead>
<tbody>${invoice.line_items.map(
    (l) =>
      html`<tr><td>${l.description}</td><td class="num">${l.kind === "credit" ? "" : decimal(l.quantity)}</td><td class="num">${l.kind === "credit" ? "" : money(l.unit_price, currency)}</td><td class="num">${money(l.amount, currency)}</td></tr>`,
  )}</tbody></table>`;
  const content = html`<div class="card">
<h1>Invoice ${invoice.number}</h1>
<p>From <strong>${hosted.sellerName}</strong></p>
<dl class="facts">
<dt>Billed to</dt><dd>${hosted.customer.name}${hosted.customer.address ? html`<br>${hosted.customer.address.split("\n").map((line, i) => html`${i > 0 ? html`<br>` : ""}${line}`)}` : ""}</dd>
<dt>Status</dt><dd>${invoice.status}</dd>
<dt>Billing period</dt><dd>${invoice.billing_period.start} to ${invoice.billing_period.end}</dd>
<dt>Issue date</dt><dd>${invoice.issued_date}</dd>
<dt>Due date</dt><dd>${invoice.due_date}</dd>
${invoice.paid_date ? html`<dt>Paid on</dt><dd>${invoice.paid_date}</dd>` : ""}
</dl>
${lines}
<dl class="facts">
<dt>Subtotal</dt><dd>${money(invoice.subtotal, currency)}</dd>
<dt>Tax</dt><dd>${money(invoice.tax, currency)}</dd>
<dt>Total</dt><dd>${money(invoice.total, currency)}</dd>
<dt>Amount due</dt><dd><strong>${money(hosted.amountDue, currency)}</strong></dd>
</dl>
${hosted.memo ? html`<p>${hosted.memo}</p>` : ""}
<p class="actions"><a href="${base}/pdf">Download the PDF</a> · <a href="${base}/usage.csv">Download the usage statement (CSV)</a></p>
</div>`;
  return shell(`Invoice ${invoice.number} from ${hosted.sellerName}`, content);
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
