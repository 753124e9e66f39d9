import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ValidationError } from "../kernel/errors.js";
import { checkExpiry, checkName, checkScopes, checkUser } from "./access-checks.js";

/** The refusal `run` throws: its code and the field its first detail names (what a form shows it beside). */
function refusal(run: () => unknown): { code: string; path: string | undefined; message: string | undefined } {
  try {
    run();
  } catch (error) {
    assert.ok(error instanceof ValidationError, `a ValidationError, not ${String(error)}`);
    return { code: error.code, path: error.details?.[0]?.path, message: error.details?.[0]?.message };
  }
  assert.fail("expected a refusal");
}

describe("checkScopes", () => {
  const cases: Array<{ name: string; scopes: string[] | undefined; result: string[] | null }> = [
    { name: "left out: full access", scopes: undefined, result: null },
    { name: "one known scope", scopes: ["usage:write"], result: ["usage:write"] },
    {
      name: "repeats kept once, in order",
      scopes: ["invoices:read", "usage:write", "invoices:read"],
      result: ["invoices:read", "usage:write"],
    },
  ];
  for (const c of cases) it(`takes ${c.name}`, () => assert.deepEqual(checkScopes(c.scopes), c.result));

  it("refuses an unknown scope, naming it and the known ones", () => {
    assert.throws(
      () => checkScopes(["usage:write", "admin"]),
      (e: unknown) =>
        e instanceof ValidationError &&
        e.code === "invalid_scope" &&
        /Unknown scope: admin\. Known scopes: /.test(e.message),
    );
  });

  it("refuses an empty list (full access is said by leaving scopes out)", () => {
    assert.equal(refusal(() => checkScopes([])).code, "invalid_scope");
  });
});

describe("checkName", () => {
  const taken: Array<[string, string]> = [
    ["Acme", "Acme"],
    ["  Acme Corp  ", "Acme Corp"],
    ["x".repeat(200), "x".repeat(200)],
  ];
  for (const [input, stored] of taken) {
    it(`takes ${JSON.stringify(input.slice(0, 20))} as ${JSON.stringify(stored.slice(0, 20))}`, () =>
      assert.equal(checkName("name", input), stored));
  }

  const refused: Array<{ input: string; message: string }> = [
    { input: "", message: "is required" },
    { input: "   ", message: "is required" },
    { input: "x".repeat(201), message: "Too big: expected string to have <=200 characters" },
    { input: "Ac\u0000me", message: "must not contain NUL characters" },
  ];
  for (const c of refused) {
    it(`refuses ${JSON.stringify(c.input.slice(0, 20))}: ${c.message}`, () => {
      assert.deepEqual(
        refusal(() => checkName("name", c.input)),
        {
          code: "invalid_request",
          path: "name",
          message: c.message,
        },
      );
    });
  }

  it("names the form's field when it differs from the word in the message", () => {
    assert.equal(refusal(() => checkName("company name", "", "company")).path, "company");
  });
});

describe("checkUser", () => {
  it("stores the email trimmed and lower-cased", () => {
    assert.equal(checkUser("  Ada@Example.COM ", "correct horse"), "ada@example.com");
  });

  const refused: Array<{ name: string; email: string; password: string; path: string; message: string }> = [
    { name: "a blank email", email: " ", password: "correct horse", path: "email", message: "is required" },
    {
      name: "an email without a domain",
      email: "ada@",
      password: "correct horse",
      path: "email",
      message: "Invalid email address",
    },
    {
      name: "a 7-character password",
      email: "ada@example.com",
      password: "1234567",
      path: "password",
      message: "Too short: use at least 8 characters.",
    },
    {
      name: "a 1025-character password",
      email: "ada@example.com",
      password: "p".repeat(1025),
      path: "password",
      message: "Too long: at most 1024 characters.",
    },
  ];
  for (const c of refused) {
    it(`refuses ${c.name}`, () => {
      assert.deepEqual(
        refusal(() => checkUser(c.email, c.password)),
        {
          code: "invalid_request",
          path: c.path,
          message: c.message,
        },
      );
    });
  }

  it("takes a password of exactly 8 and of exactly 1024 characters", () => {
    assert.equal(checkUser("ada@example.com", "12345678"), "ada@example.com");
    assert.equal(checkUser("ada@example.com", "p".repeat(1024)), "ada@example.com");
  });
});

describe("checkExpiry", () => {
  const now = new Date("2026-03-20T10:00:00Z");

  it("takes no expiry, and one after now", () => {
    assert.equal(checkExpiry(undefined, now), undefined);
    assert.equal(checkExpiry(null, now), undefined);
    assert.equal(checkExpiry(new Date("2026-03-20T10:00:00.001Z"), now), undefined);
  });

  const refused: Array<{ name: string; at: Date; message: string }> = [
    { name: "an invalid date", at: new Date("not a date"), message: "Invalid date" },
    { name: "now itself", at: now, message: "must be in the future" },
    { name: "a past instant", at: new Date("2026-03-19T10:00:00Z"), message: "must be in the future" },
  ];
  for (const c of refused) {
    it(`refuses ${c.name}`, () => {
      assert.deepEqual(
        refusal(() => checkExpiry(c.at, now)),
        {
          code: "invalid_expires_at",
          path: "expires_at",
          message: c.message,
        },
      );
    });
  }
});
