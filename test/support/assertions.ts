/**
 * The assertions every suite shares: a status (printing the body when it differs), the error shape of
 * docs/api.md, "Errors", exact decimals, and one bounded wait for a condition.
 */
import assert from "node:assert/strict";
import Big from "big.js";
import type { LightMyRequestResponse } from "fastify";

/** Asserts a status and prints the body when it differs. */
export function expectStatus(res: LightMyRequestResponse, status: number): void {
  assert.equal(res.statusCode, status, `expected ${status}, got ${res.statusCode}: ${res.body}`);
}

/** The error shape of docs/api.md, "Errors": a readable `error` and a snake_case `code`. */
export interface ErrorBody {
  error: string;
  code: string;
  details?: { path: string; message: string }[];
  [extra: string]: unknown;
}

/**
 * Asserts an error answer: the status, a JSON body with a non-empty `error` sentence and a snake_case `code`
 * (the given one, when given). Returns the body.
 */
export function expectError(res: LightMyRequestResponse, status: number, code?: string): ErrorBody {
  expectStatus(res, status);
  assert.match(String(res.headers["content-type"]), /^application\/json/);
  const body = res.json();
  assert.equal(typeof body.error, "string");
  assert.ok(body.error.length > 0, "error is a non-empty sentence");
  assert.equal(typeof body.code, "string");
  assert.match(body.code, /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/, `code '${body.code}' is snake_case`);
  if (code !== undefined) assert.equal(body.code, code, `expected code ${code}: ${res.body}`);
  return body;
}

/** Asserts two decimals are equal, showing both. */
export function assertDecimal(actual: number | Big, expected: number | string | Big, message?: string): void {
  const a = new Big(actual);
  const e = new Big(expected);
  assert.ok(a.eq(e), `${message ? `${message}: ` : ""}expected ${e.toFixed()}, got ${a.toFixed()}`);
}

/**
 * Polls `condition` every 25 ms until it holds; fails after `timeoutMs` naming `what`. The default bound (2
 * minutes) only ends a test that would otherwise hang: a condition that holds returns at once, and on a machine
 * at load 10 (the fast tier beside two CPU hogs) a child's start took longer than the 20 s this bound once was.
 */
export async function waitFor(
  what: string,
  condition: () => boolean | Promise<boolean>,
  timeoutMs = 120_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await condition()) return;
    if (Date.now() > deadline) assert.fail(`gave up after ${timeoutMs} ms waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
