/**
 * For the dashboard's billing pages (overview, usage, invoices): a signed-up company with an API key made on
 * its Settings page, so that the test can make contracts and usage through the public API and then look at
 * them in the dashboard, as an account holder would.
 */
import assert from "node:assert/strict";
import type { LightMyRequestResponse } from "fastify";
import { createCustomer, createSampleContract, type Contract } from "./billing-helpers.js";
import { signUp, type DashboardClient } from "./dashboard-helpers.js";
import type { TestApp } from "./harness.js";

export async function dashboardCompany(t: () => TestApp, options: { company?: string } = {}): Promise<{ client: DashboardClient; key: string }> {
  const { client } = await signUp(t, options);
  const created = await client.post("/settings/api-keys", { name: "billing page tests" });
  assert.equal(created.statusCode, 200);
  const key = /id="new-api-key">([^<]+)</.exec(created.body)?.[1];
  assert.ok(key, "the new key is on the page");
  return { client, key };
}

/** A customer of that company with an active sample contract (from the harness's 2026-03-15, in USD). */
export async function sampleContract(t: () => TestApp, key: string, customerName: string): Promise<Contract> {
  const customer = await createCustomer(t(), key, customerName);
  return createSampleContract(t(), key, customer.id);
}

/** Asserts an error page: the status, a role="alert" message matching `message`. */
export function assertAlert(page: LightMyRequestResponse, status: number, message: RegExp): void {
  assert.equal(page.statusCode, status, page.body.slice(0, 2000));
  const alert = /role="alert">([\s\S]*?)<\/(?:div|p)>/.exec(page.body)?.[1];
  assert.ok(alert, `an alert on the page: ${page.body.slice(0, 2000)}`);
  assert.match(alert, message);
}

/** The rows of the page's table with this caption (the markup of each <tr> of its body). */
export function tableRows(body: string, caption: string): string[] {
  const start = body.indexOf(`<caption class="visually-hidden">${caption}</caption>`);
  if (start < 0) return [];
  const end = body.indexOf("</table>", start);
  const tbody = body.slice(start, end);
  return [...tbody.matchAll(/<tr>([\s\S]*?)<\/tr>/g)].map((m) => m[1]!).slice(1);
}
