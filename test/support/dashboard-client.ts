/**
 * A cookie-keeping client for the dashboard over fastify.inject: signs up or logs in like a browser (form
 * posts with the CSRF token read from the page), then gets pages and posts forms; and, for the billing pages
 * (overview, usage, invoices), a signed-up company with an API key made on its Settings page, so that a test
 * can make contracts and usage through the public API and then look at them as an account holder would.
 */
import { randomBytes } from "node:crypto";
import type { LightMyRequestResponse } from "fastify";
import assert from "node:assert/strict";
import { createCustomer, createSampleContract, type Contract } from "./api.js";
import type { TestApp } from "./harness.js";
import { multipart, type MultipartPart } from "./uploads.js";

export interface DashboardClient {
  cookies: Map<string, string>;
  get(path: string): Promise<LightMyRequestResponse>;
  /** Posts a form; adds the CSRF token of the session (read from any signed-in page) unless `_csrf` is given. */
  post(
    path: string,
    fields?: Record<string, string | string[]>,
    options?: { csrf?: string | null },
  ): Promise<LightMyRequestResponse>;
  /** Posts a multipart form (a file upload), the session's CSRF token first unless `csrf` is null. */
  postMultipart(
    path: string,
    parts: readonly MultipartPart[],
    options?: { csrf?: string | null },
  ): Promise<LightMyRequestResponse>;
  /** The session's CSRF token, read from the overview page. */
  csrf(): Promise<string>;
}

const CSRF_RE = /name="_csrf" value="([^"]+)"/;

export function csrfIn(body: string): string | undefined {
  return CSRF_RE.exec(body)?.[1];
}

export function formBody(fields: Record<string, string | string[]>): string {
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(fields)) {
    for (const v of Array.isArray(value) ? value : [value]) params.append(key, v);
  }
  return params.toString();
}

export function dashboardClient(t: () => TestApp): DashboardClient {
  const cookies = new Map<string, string>();
  const cookieHeader = () => [...cookies].map(([k, v]) => `${k}=${v}`).join("; ");
  const remember = (response: LightMyRequestResponse) => {
    const header = response.headers["set-cookie"];
    for (const line of header === undefined ? [] : Array.isArray(header) ? header : [header]) {
      const [pair] = line.split(";");
      const eq = pair!.indexOf("=");
      const name = pair!.slice(0, eq);
      const value = pair!.slice(eq + 1);
      if (value === "" || /Max-Age=0\b/.test(line)) cookies.delete(name);
      else cookies.set(name, value);
    }
    return response;
  };
  const client: DashboardClient = {
    cookies,
    async get(path) {
      return remember(
        await t().call({ method: "GET", url: path, headers: cookies.size ? { cookie: cookieHeader() } : {} }),
      );
    },
    async post(path, fields = {}, options = {}) {
      const all = { ...fields };
      if (!("_csrf" in all) && options.csrf !== null) all._csrf = options.csrf ?? (await client.csrf());
      return remember(
        await t().call({
          method: "POST",
          url: path,
          headers: {
            "content-type": "application/x-www-form-urlencoded",
            ...(cookies.size ? { cookie: cookieHeader() } : {}),
          },
          payload: formBody(all),
        }),
      );
    },
    async postMultipart(path, parts, options = {}) {
      const token = options.csrf === null ? [] : [{ name: "_csrf", value: options.csrf ?? (await client.csrf()) }];
      const body = await multipart([...token, ...parts]);
      return remember(
        await t().call({
          method: "POST",
          url: path,
          headers: { ...body.headers, ...(cookies.size ? { cookie: cookieHeader() } : {}) },
          payload: body.payload,
        }),
      );
    },
    async csrf() {
      const page = await client.get(cookies.has("__Host-billing_session") ? "/settings/api-keys" : "/login");
      const token = csrfIn(page.body);
      if (!token) throw new Error(`no CSRF token on the page (status ${page.statusCode})`);
      return token;
    },
  };
  return client;
}

/** Signs a new company up through the sign-up form; the client then holds its session. */
export async function signUp(t: () => TestApp, options: { company?: string; email?: string; password?: string } = {}) {
  const client = dashboardClient(t);
  const email = options.email ?? `owner-${randomBytes(4).toString("hex")}@example.com`;
  const password = options.password ?? "correct horse battery";
  const form = await client.get("/signup");
  const response = await client.post("/signup", {
    company: options.company ?? `Dash ${randomBytes(3).toString("hex")}`,
    email,
    password,
    _csrf: csrfIn(form.body)!,
  });
  if (response.statusCode !== 303)
    throw new Error(`sign-up failed: ${response.statusCode} ${response.body.slice(0, 500)}`);
  return { client, email, password };
}

export async function dashboardCompany(
  t: () => TestApp,
  options: { company?: string } = {},
): Promise<{ client: DashboardClient; key: string }> {
  const { client } = await signUp(t, options);
  const created = await client.post("/settings/api-keys", { name: "billing page tests" });
  assert.equal(created.statusCode, 200);
  const key = /id="new-api-key">([^<]+)</.exec(created.body)?.[1];
  assert.ok(key, "the new key is on the page");
  return { client, key };
}

/** A customer of that company with an active sample contract (from the harness's 2026-03-15, in USD). */
export async function sampleContract(t: () => TestApp, key: string, customerName: string): Promise<Contract> {
  const customer = await createCustomer(t(), key, { name: customerName });
  return createSampleContract(t(), key, customer.id);
}

/** Asserts an error page: the status, a role="alert" message matching `message`. */
export function assertAlert(page: LightMyRequestResponse, status: number, message: RegExp): void {
  assert.equal(page.statusCode, status, page.body.slice(0, 2000));
  const alert = /role="alert">([\s\S]*?)<\/(?:div|p)>/.exec(page.body)?.[1];
  assert.ok(alert, `an alert on the page: ${page.body.slice(0, 2000)}`);
  assert.match(alert, message);
}

/** The text of the page's first alert (a flash), or undefined. */
export const alertOf = (body: string): string | undefined => /role="alert">([^<]*)</.exec(body)?.[1];

/**
 * The error shown beside the field with this id (layout.ts, `inputField`), as a reader sees it; undefined when
 * the field has none. Also checks the field points at it (aria-describedby) and is marked invalid.
 */
export function fieldErrorOf(body: string, id: string): string | undefined {
  const message = new RegExp(
    `<p class="field-error" id="${id}-error"><span class="visually-hidden">Error: </span>([\\s\\S]*?)</p>`,
  ).exec(body)?.[1];
  if (message === undefined) return undefined;
  assert.match(
    body,
    new RegExp(`id="${id}"[^>]*aria-invalid="true" aria-describedby="${id}-error"`),
    `field ${id} is marked invalid`,
  );
  return message
    .replaceAll("&amp;", "&")
    .replaceAll("&#39;", "'")
    .replaceAll("&quot;", '"')
    .replaceAll("&lt;", "<")
    .replaceAll("&gt;", ">");
}

/** The rows of the page's table with this caption (the markup of each <tr> of its body). */
export function tableRows(body: string, caption: string): string[] {
  const start = body.indexOf(`<caption class="visually-hidden">${caption}</caption>`);
  if (start < 0) return [];
  const end = body.indexOf("</table>", start);
  const tbody = body.slice(start, end);
  // A stacked table repeats each column's header on its cells (data-label, for phones): left out, the cells remain.
  return [...tbody.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => withoutLabels(m[1]!)).slice(1);
}

/** Markup without the `data-label` attributes a stacked table puts on its cells. */
const withoutLabels = (markup: string): string => markup.replace(/ data-label="[^"]*"/g, "");

/**
 * The values a browser would send for the form posting to `action`, as the page shows them: every input's
 * value (checked radios and checkboxes only) and every select's selected option, entities decoded.
 */
export function formValuesIn(body: string, action: string): Record<string, string> {
  const start = body.indexOf(`action="${action}"`);
  assert.ok(start >= 0, `a form posting to ${action}`);
  const form = body.slice(start, body.indexOf("</form>", start));
  const decode = (text: string) =>
    text
      .replaceAll("&quot;", '"')
      .replaceAll("&#39;", "'")
      .replaceAll("&lt;", "<")
      .replaceAll("&gt;", ">")
      .replaceAll("&amp;", "&");
  const attr = (tag: string, name: string) => new RegExp(`\\s${name}="([^"]*)"`).exec(tag)?.[1];
  const values: Record<string, string> = {};
  for (const [tag] of form.matchAll(/<input\b[^>]*>/g)) {
    const name = attr(tag, "name");
    const type = attr(tag, "type") ?? "text";
    if (name === undefined || ((type === "radio" || type === "checkbox") && !/\schecked\b/.test(tag))) continue;
    values[name] = decode(attr(tag, "value") ?? "");
  }
  for (const [, name, options] of form.matchAll(/<select\b[^>]*\sname="([^"]*)"[^>]*>([\s\S]*?)<\/select>/g)) {
    const selected = /<option value="([^"]*)" selected>/.exec(options!)?.[1];
    values[name!] = decode(selected ?? /<option value="([^"]*)"/.exec(options!)?.[1] ?? "");
  }
  return values;
}
