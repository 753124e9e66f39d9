import { decimalWords, moneyWords } from "../../domain/contracts/rule-price-wording.js";
import type { JsonNumber } from "../../platform/exact-json.js";

/** A decimal as the domain presents it: exact text in a JsonNumber, or a string or number. */
export type DecimalValue = number | string | JsonNumber;
import { html, type HtmlValue, type SafeHtml } from "./html.js";

/** What every signed-in page knows about its viewer. */
export interface PageContext {
  companyName: string;
  email: string;
  csrfToken: string;
  /** The path of the page, for the navigation's aria-current. */
  path: string;
}

const NAV = [
  { href: "/", label: "Overview" },
  { href: "/customers", label: "Customers" },
  { href: "/contracts", label: "Contracts" },
  { href: "/usage", label: "Usage" },
  { href: "/invoices", label: "Invoices" },
  { href: "/receivables", label: "Receivables" },
  { href: "/webhooks", label: "Webhooks" },
  { href: "/settings/api-keys", label: "Settings" },
] as const;

const isCurrent = (href: string, path: string) =>
  href === "/"
    ? path === "/"
    : path === href ||
      path.startsWith(`${href}/`) ||
      (href.startsWith("/settings") && path.startsWith("/settings")) ||
      (href === "/contracts" && path.startsWith("/upload-contract"));

function head(title: string): SafeHtml {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title} · Billing</title>
<link rel="stylesheet" href="/assets/dashboard.css">
<script src="/assets/dashboard.js" defer></script>
</head>`;
}

/** A signed-in page: header, navigation, a live region for announcements, and the content. */
export function page(
  ctx: PageContext,
  title: string,
  content: HtmlValue,
  options: { flash?: Flash | undefined } = {},
): string {
  return html`${head(title)}
<body>
<a class="skip-link" href="#content">Skip to content</a>
<header class="top">
  <div class="bar">
    <a class="brand" href="/">Billing</a>
    <span class="who">${ctx.companyName} · ${ctx.email}</span>
    <form method="post" action="/logout">${csrfField(ctx)}<button type="submit" class="secondary">Log out</button></form>
  </div>
</header>
<nav class="main" aria-label="Main">
  <ul>${NAV.map((item) => html`<li><a href="${item.href}"${isCurrent(item.href, ctx.path) ? html` aria-current="page"` : ""}>${item.label}</a></li>`)}</ul>
</nav>
<main id="content" tabindex="-1">
<h1>${title}</h1>
${options.flash ? flashBox(options.flash) : ""}
${content}
</main>
<div id="live-region" class="visually-hidden" role="status" aria-live="polite"></div>
</body>
</html>`.value;
}

/** Sign-in, sign-up and the signed-out error page: no navigation. */
export function authPage(title: string, content: HtmlValue): string {
  return html`${head(title)}
<body>
<main id="content" class="auth">
<div class="card">
<h1>${title}</h1>
${content}
</div>
</main>
<div id="live-region" class="visually-hidden" role="status" aria-live="polite"></div>
</body>
</html>`.value;
}

export interface Flash {
  kind: "ok" | "error" | "warn";
  message: string;
}

export function flashBox(flash: Flash): SafeHtml {
  return flash.kind === "error"
    ? html`<div class="alert error" role="alert">${flash.message}</div>`
    : html`<div class="alert ${flash.kind}" role="status">${flash.message}</div>`;
}

/**
 * The flash named by a redirect's `?done=`. Own keys only: a plain lookup would find `constructor` or
 * `__proto__` on every object and render an empty alert for a crafted link.
 */
export function doneFlash(table: Record<string, Flash>, key: unknown): Flash | undefined {
  return typeof key === "string" && Object.hasOwn(table, key) ? table[key] : undefined;
}

/** What a form shows under a field when it was refused: the message, tied to the field for screen readers. */
export function fieldError(id: string, message: string | undefined): SafeHtml {
  return message === undefined
    ? html``
    : html`<p class="field-error" id="${id}-error"><span class="visually-hidden">Error: </span>${message}</p>`;
}

/** The attributes that mark a refused field and point at its message. */
export function invalidAttributes(id: string, message: string | undefined): SafeHtml {
  return message === undefined ? html`` : html` aria-invalid="true" aria-describedby="${id}-error"`;
}

export interface InputSpec {
  id: string;
  name: string;
  label: string;
  hint?: string | undefined;
  value?: string | undefined;
  type?: string;
  required?: boolean;
  /** `decimal` for money and rates: a number pad on phones, text otherwise (never a float input). */
  inputmode?: "decimal" | "numeric" | "email" | "url";
  maxlength?: number;
  placeholder?: string;
  error?: string | undefined;
  /** Ids of more text about the field (where its value came from), read out with it. */
  describedBy?: string | undefined;
}

/** A labelled input with its hint and, when it was refused, its error beside it. */
export function inputField(spec: InputSpec): SafeHtml {
  return html`<div><label for="${spec.id}">${spec.label}${spec.hint ? html` <span class="hint">${spec.hint}</span>` : ""}</label><input id="${spec.id}" name="${spec.name}" type="${spec.type ?? "text"}"${
    spec.inputmode ? html` inputmode="${spec.inputmode}"` : ""
  }${spec.maxlength ? html` maxlength="${String(spec.maxlength)}"` : ""}${spec.placeholder ? html` placeholder="${spec.placeholder}"` : ""}${spec.required ? html` required` : ""} value="${spec.value ?? ""}"${describedAttributes(spec)}>${fieldError(spec.id, spec.error)}</div>`;
}

/** A field's aria-invalid and aria-describedby: its error first, then any other text about it. */
function describedAttributes(spec: InputSpec): SafeHtml {
  if (spec.describedBy === undefined) return invalidAttributes(spec.id, spec.error);
  const ids = spec.error === undefined ? spec.describedBy : `${spec.id}-error ${spec.describedBy}`;
  return html`${spec.error === undefined ? "" : html` aria-invalid="true"`} aria-describedby="${ids}"`;
}

/** The hidden CSRF field every state-changing form carries. */
export const csrfField = (ctx: { csrfToken: string }) =>
  html`<input type="hidden" name="_csrf" value="${ctx.csrfToken}">`;

/** An empty state: says what is missing and what to do about it. */
export const emptyState = (message: string, action?: HtmlValue) =>
  html`<div class="empty"><p>${message}</p>${action ?? ""}</div>`;

export interface Column<T> {
  header: string;
  cell: (row: T) => HtmlValue;
  numeric?: boolean;
}

/**
 * A table with a caption for screen readers, scrolling sideways on a narrow screen instead of overflowing. A
 * `stacked` table does not scroll: on a narrow screen each row becomes a card of "header: value" lines (each cell
 * carries its header as `data-label`, which the stylesheet shows before it), so that every figure is read without
 * scrolling sideways: the tables whose figures matter (invoice lines, invoices, pricing rules).
 */
export function dataTable<T>(
  caption: string,
  columns: Column<T>[],
  rows: readonly T[],
  options: { stacked?: boolean } = {},
): SafeHtml {
  const label = (c: Column<T>) => (options.stacked ? html` data-label="${c.header}"` : "");
  return html`<div class="table-wrap${options.stacked ? " stacked" : ""}" role="region" aria-label="${caption}" tabindex="0">
<table${options.stacked ? html` class="stacked"` : ""}>
<caption class="visually-hidden">${caption}</caption>
<thead><tr>${columns.map((c) => html`<th scope="col"${c.numeric ? html` class="num"` : ""}>${c.header}</th>`)}</tr></thead>
<tbody>${rows.map((row) => html`<tr>${columns.map((c) => html`<td${c.numeric ? html` class="num"` : ""}${label(c)}>${c.cell(row)}</td>`)}</tr>`)}</tbody>
</table>
</div>`;
}

/** "Next page" for cursor pagination: keeps the filters, adds starting_after. */
export function pager(
  basePath: string,
  query: Record<string, string | undefined>,
  hasMore: boolean,
  lastId: string | undefined,
): SafeHtml {
  const first = query.starting_after
    ? html`<a href="${link(basePath, { ...query, starting_after: undefined })}">First page</a>`
    : html`<span></span>`;
  const next =
    hasMore && lastId
      ? html`<a href="${link(basePath, { ...query, starting_after: lastId })}" rel="next">Next page</a>`
      : "";
  return html`<nav class="pager" aria-label="Pages">${first}${next}</nav>`;
}

/** A path with a query string of the defined, non-empty values. */
export function link(path: string, query: Record<string, string | undefined>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) if (value !== undefined && value !== "") params.set(key, value);
  const text = params.toString();
  return text ? `${path}?${text}` : path;
}

export const contractPath = (id: string) => `/contracts/${encodeURIComponent(id)}`;

/**
 * A list page's filters as typed (blank ones dropped), kept as text so a value the service refuses is shown
 * back as it was. Only the named filters: the rest of the query string is not the page's business.
 */
export function rawFilters<Name extends string>(
  query: Record<string, unknown>,
  names: readonly Name[],
): Partial<Record<Name, string>> {
  const raw: Partial<Record<Name, string>> = {};
  for (const name of names) {
    const value = query[name];
    if (typeof value === "string" && value.trim() !== "") raw[name] = value.trim();
  }
  return raw;
}

export const badge = (text: string, tone: "ok" | "bad" | "warn" | "plain" = "plain") =>
  html`<span class="badge${tone === "plain" ? "" : ` ${tone}`}">${text}</span>`;

/** A quantity, rate or count as the API gives it: plain notation, grouped thousands, only the digits it has. */
export function decimal(value: DecimalValue | null | undefined): string {
  return value === null || value === undefined ? "—" : decimalWords(value);
}

/**
 * Money as the API gives it (a JSON number or decimal string) in its currency, as the agreement and the invoice
 * PDF write it (moneyWords: Intl.NumberFormat from the decimal's text, never float math): the currency's
 * minor-unit digits at least, and every digit a per-event charge carries. When a page does not know the
 * currency (a contract lookup missed), it shows "—" in its place rather than a guess.
 */
export function money(amount: DecimalValue | null | undefined, currency: string | undefined): string {
  return amount === null || amount === undefined ? "—" : moneyWords(amount, currency);
}

/** An ISO timestamp as "2026-03-15 12:00 UTC", in a <time> element. */
export function when(iso: string | null | undefined): SafeHtml {
  if (!iso) return html`—`;
  return html`<time datetime="${iso}">${iso.slice(0, 16).replace("T", " ")} UTC</time>`;
}

/** The Settings area's pages, the current one marked: every Settings page shows it above its content. */
export function settingsNav(path: string): SafeHtml {
  const pages = [
    { href: "/settings/api-keys", label: "API keys" },
    { href: "/settings/invoice-profile", label: "Invoice profile" },
  ];
  return html`<nav class="actions" aria-label="Settings">${pages.map(({ href, label }) =>
    path === href || path.startsWith(`${href}/`)
      ? html`<a class="button" href="${href}" aria-current="page">${label}</a>`
      : html`<a class="button secondary" href="${href}">${label}</a>`,
  )}</nav>`;
}
