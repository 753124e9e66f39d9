/** Small helpers shared by the foundation test files (auth, customers, pagination, admin, service endpoints). */
import assert from "node:assert/strict";
import type { LightMyRequestResponse } from "fastify";
import { ALL_SCOPES } from "../src/domain/kernel/actor.js";
import type { TestApp } from "./harness.js";

/** The API key scopes (docs/api.md, "Scopes per endpoint"), as the service knows them. */
export const ALL_SCOPE_NAMES = ALL_SCOPES;

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** Asserts the error shape of docs/api.md, "Errors": a readable `error` and a snake_case `code`. */
export interface ErrorBody {
  error: string;
  code: string;
  details?: { path: string; message: string }[];
  [extra: string]: unknown;
}

export function assertErrorBody(res: LightMyRequestResponse, status: number, code?: string): ErrorBody {
  assert.equal(res.statusCode, status, `expected ${status}, got ${res.statusCode}: ${res.body}`);
  assert.match(String(res.headers["content-type"]), /^application\/json/);
  const body = res.json();
  assert.equal(typeof body.error, "string");
  assert.ok(body.error.length > 0, "error is a non-empty sentence");
  assert.equal(typeof body.code, "string");
  assert.match(body.code, /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/, `code '${body.code}' is snake_case`);
  if (code !== undefined) assert.equal(body.code, code);
  return body;
}

/** The customers a key sees (first page of 100). */
export async function listCustomers(t: TestApp, key: string, query = ""): Promise<{ id: string; name: string; external_id: string | null }[]> {
  const res = await t.call({ method: "GET", url: `/v1/billing/customers?limit=100${query ? `&${query}` : ""}`, key });
  assert.equal(res.statusCode, 200, res.body);
  return res.json().data;
}

/** How many rows the `events` table holds for a company. */
export async function eventCount(t: TestApp, companyId: string): Promise<number> {
  const { rows } = await t.app.db.query<{ n: number }>("SELECT count(*)::int AS n FROM events WHERE company_id = $1", [companyId]);
  return rows[0]!.n;
}

/** POST /v1/billing/customers, asserting 201; returns the customer. */
export async function createCustomer(t: TestApp, key: string, payload: Record<string, unknown>): Promise<Record<string, any>> {
  const res = await t.call({ method: "POST", url: "/v1/billing/customers", key, payload });
  assert.equal(res.statusCode, 201, res.body);
  return res.json();
}
