/**
 * Fuzzing the dashboard (issue 8, item 4, for the web pages of issue 7): generated requests to every page
 * and form, signed in and not, with and without the CSRF token. Whatever arrives, the service answers in
 * time and never with a 5xx; a request without a valid session or CSRF token stores nothing.
 *
 * Then every form, one field at a time, gets a NUL (refused with 400, nothing stored) and a percent-encoded
 * surrogate half (which decodes to U+FFFD: never a 5xx).
 *
 * FUZZ_RUNS=n scales the number of requests (default 600 per engine); FUZZ_SEED=n replays a run.
 */
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { before, it } from "node:test";
import fc from "fast-check";
import { describeEachEngine } from "../support/harness.js";
import { submitAccepted, usageEvent } from "../support/api.js";
import { formBody, signUp, type DashboardClient } from "../support/dashboard-client.js";
import { abusiveUploads, ODD_CHARS, storedState } from "../support/fuzz-generators.js";
import { bombPdf, plainPdf } from "../support/uploads.js";

const RUNS = Math.max(1, Math.round(Number(process.env.FUZZ_RUNS ?? 2500) / 4));
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const MAX_MS = 2000;
/** Abusive uploads per engine (a few are read by a child process: a second each, a bomb more), and their time limit. */
const UPLOAD_RUNS = Math.max(10, Math.round(RUNS / 30));
const UPLOAD_MAX_MS = 20_000;

interface Seed {
  client: DashboardClient;
  companyId: string;
  csrf: string;
  customerId: string;
  contractId: string;
  endpointId: string;
  keyId: string;
  eventId: string;
  grantId: string;
}

// Form routes; `:id`-style segments are filled with a real id of the seed or garbage.
const FORM_ROUTES = [
  "/customers",
  "/customers/:customer",
  "/contracts/sample",
  "/contracts/:contract/rules",
  "/contracts/:contract/rules/change",
  "/contracts/:contract/credits",
  "/usage/:event/void",
  "/invoices/project",
  "/settings/api-keys",
  "/settings/api-keys/:key/revoke",
  "/settings/invoice-profile",
  "/settings/invoice-profile/logo/delete",
  "/webhooks",
  "/webhooks/:endpoint",
  "/webhooks/:endpoint/status",
  "/webhooks/:endpoint/rotate",
  "/webhooks/:endpoint/delete",
  "/webhooks/:endpoint/test",
  "/webhooks/:endpoint/deliveries/:delivery/resend",
  "/login",
  "/signup",
];
const PAGE_ROUTES = [
  "/",
  "/customers",
  "/customers/:customer",
  "/contracts",
  "/contracts/:contract",
  "/contracts/:contract/credits/:grant",
  "/usage",
  "/usage/:event",
  "/invoices",
  "/invoices/:invoice",
  "/receivables",
  "/webhooks",
  "/webhooks/:endpoint",
  "/webhooks/:endpoint/rotate",
  "/webhooks/:endpoint/delete",
  "/webhooks/:endpoint/deliveries/:delivery",
  "/settings/api-keys",
  "/settings/api-keys/:key/revoke",
  "/settings/invoice-profile",
  "/login",
  "/signup",
];
const FIELD_NAMES = [
  "name",
  "external_id",
  "email",
  "domain",
  "country",
  "payment_terms_days",
  "customer_id",
  "contract",
  "status",
  "from",
  "to",
  "metric",
  "starting_after",
  "limit",
  "billing_period_start",
  "billing_period_end",
  "period_start",
  "period_end",
  "scopes",
  "expires_on",
  "url",
  "description",
  "events",
  "enabled",
  "type",
  "rule_id",
  "amount",
  "rate",
  "monthly_cap",
  "model",
  "frequency",
  "company",
  "password",
  "next",
  "external_contract_id",
  "effective_date",
  "action",
  "reason",
  "starts_on",
  "metrics",
  "priority",
  "address",
  "registration_number",
  "tax_id",
  "invoice_memo",
  "invoice_delivery",
  "legal_name",
  "payment_instructions",
  "invoice_footer",
  "paper_size",
  "search",
];

const oddText = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.array(fc.constantFrom(...ODD_CHARS), { minLength: 1, maxLength: 6 }).map((parts) => parts.join("")),
  fc.constantFrom(
    "",
    " ",
    "1e309",
    "-0",
    "NaN",
    "Infinity",
    "-1",
    "99999999999999999999",
    "0.0000000000001",
    "2026-02-30",
    "0000-01-01",
    "9999-12-31T99:99:99Z",
    "2026-04-01",
    "preview",
  ),
  fc.integer({ min: 1000, max: 70_000 }).map((n) => "x".repeat(n)),
);

function segment(seed: Seed, kind: string): fc.Arbitrary<string> {
  const real: Record<string, string> = {
    contract: seed.contractId,
    customer: seed.customerId,
    endpoint: seed.endpointId,
    key: seed.keyId,
    event: seed.eventId,
    grant: seed.grantId,
  };
  return fc.oneof(
    fc.constant(real[kind] ?? "INV-000001"),
    fc.constantFrom("00000000-0000-0000-0000-000000000000", "INV-999999", "..", "%2e%2e", "%00", "%ff", "a%2Fb"),
    fc.string({ minLength: 1, maxLength: 30 }).map(encodeURIComponent),
  );
}

function fillPath(seed: Seed, route: string): fc.Arbitrary<string> {
  const parts = route
    .split("/")
    .map((part) => (part.startsWith(":") ? segment(seed, part.slice(1)) : fc.constant(part)));
  return fc.tuple(...parts).map((p) => p.join("/"));
}

type Csrf = "valid" | "missing" | "forged";

function requests(seed: Seed) {
  const form = fc.oneof(
    fc.array(fc.tuple(fc.constantFrom(...FIELD_NAMES), oddText), { maxLength: 8 }),
    // the same field twice or more, one copy odd and one plain
    fc.tuple(fc.constantFrom(...FIELD_NAMES), oddText, fc.string({ maxLength: 10 })).map(
      ([name, odd, plain]) =>
        [
          [name, odd],
          [name, plain],
        ] as [string, string][],
    ),
  );
  const post = fc
    .record({
      path: fc.constantFrom(...FORM_ROUTES).chain((route) => fillPath(seed, route)),
      fields: form,
      csrf: fc.constantFrom<Csrf>("valid", "missing", "forged"),
      signedIn: fc.boolean(),
      contentType: fc.constantFrom(
        "application/x-www-form-urlencoded",
        "application/x-www-form-urlencoded",
        "application/json",
        "text/plain",
        "multipart/form-data; boundary=x",
      ),
      raw: fc.option(fc.constantFrom("%", "%zz=1", "a=%E0%A4%A", "=&&==", "a=1&a=2&a=3", "_csrf[]=x", '{"name":1}'), {
        nil: undefined,
      }),
    })
    .map((r) => ({ method: "POST" as const, ...r }));
  const get = fc
    .record({
      path: fc.constantFrom(...PAGE_ROUTES).chain((route) => fillPath(seed, route)),
      fields: form,
      signedIn: fc.boolean(),
    })
    .map((r) => ({ method: "GET" as const, ...r, csrf: "valid" as Csrf, contentType: "", raw: undefined }));
  return fc.oneof(get, post);
}

describeEachEngine("fuzz: generated requests to every dashboard page and form", (t) => {
  let seed: Seed;
  before(async () => {
    const { client } = await signUp(t, { company: "Dashboard Fuzz" });
    const csrf = await client.csrf();
    const customer = await client.post("/customers", { name: "Fuzz Customer", external_id: "fuzz-dash" });
    const customerId = String(customer.headers.location).split("?")[0]!.split("/").pop()!;
    const contract = await client.post("/contracts/sample", { customer_id: customerId });
    const contractId = String(contract.headers.location).split("?")[0]!.split("/").pop()!;
    const endpoint = await client.post("/webhooks", { url: "https://93.184.215.14/hook" });
    const endpointId = /\/webhooks\/([0-9a-f-]{36})/.exec(endpoint.body)![1]!;
    const key = await client.post("/settings/api-keys", { name: "fuzz key" });
    const keyId = /\/settings\/api-keys\/([0-9a-f-]{36})\/revoke/.exec(key.body)![1]!;
    // One usage event, sent with the key made above, for the event page and its void form.
    const eventId = "fuzz-event";
    await submitAccepted(t(), /id="new-api-key">([^<]+)</.exec(key.body)![1]!, [
      usageEvent(contractId, { event_id: eventId }),
    ]);
    // One credit grant, granted with the contract page's form, for the grant page.
    const granted = await client.post(`/contracts/${contractId}/credits`, { amount: "100", type: "promotional" });
    assert.equal(granted.statusCode, 303, granted.body.slice(0, 500));
    const grantId = /\/credits\/(cg_[0-9a-f]+)"/.exec((await client.get(`/contracts/${contractId}`)).body)![1]!;
    const companyId = (
      await t().app.db.query<{ company_id: string }>("SELECT company_id FROM api_keys WHERE id = $1", [keyId])
    ).rows[0]!.company_id;
    seed = { client, companyId, csrf, customerId, contractId, endpointId, keyId, eventId, grantId };
  });

  it(`answers ${RUNS} generated requests in time and never with a 5xx; without a session or CSRF token nothing is stored`, {
    timeout: 30 * 60_000,
  }, async () => {
    const cookie = [...seed.client.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const statuses = new Map<number, number>();
    await fc.assert(
      fc.asyncProperty(requests(seed), async (request) => {
        // Test events and resends would try to reach the (unreachable) receiver: they are fuzzed without a
        // valid token only.
        const reachesOut = /\/(test|resend)$/.test(request.path);
        const csrf = reachesOut && request.csrf === "valid" ? "forged" : request.csrf;
        const fields = [...request.fields];
        if (request.method === "POST" && csrf !== "missing")
          fields.push(["_csrf", csrf === "valid" ? seed.csrf : "forged-token-value"]);
        // Repeated names stay repeated (?status=a&status=b, name=x&name=y): pages must cope with either copy.
        const encoded = formBody(
          Object.fromEntries(fields.map(([k]) => [k, fields.filter(([k2]) => k2 === k).map(([, v2]) => v2)])),
        );
        const body = request.raw ?? encoded;
        const url = request.method === "GET" && fields.length > 0 ? `${request.path}?${encoded}` : request.path;
        const before = await storedState(t(), seed.companyId);
        const startedAt = performance.now();
        const response = await t().call({
          method: request.method,
          url,
          headers: {
            ...(request.signedIn ? { cookie } : {}),
            ...(request.method === "POST" ? { "content-type": request.contentType } : {}),
          },
          ...(request.method === "POST" ? { payload: body } : {}),
        });
        const ms = performance.now() - startedAt;
        statuses.set(response.statusCode, (statuses.get(response.statusCode) ?? 0) + 1);
        assert.ok(
          response.statusCode < 500,
          `${request.method} ${url} answered ${response.statusCode}: ${response.body.slice(0, 300)}`,
        );
        assert.ok(ms < MAX_MS, `${request.method} ${url} took ${Math.round(ms)} ms`);
        // A rule form's preview stores nothing, token or not (the page reads the first copy of a field, trimmed).
        const previewing =
          /\/rules(\/change)?$/.test(request.path) && fields.find(([k]) => k === "action")?.[1].trim() === "preview";
        const guarded =
          previewing ||
          !request.signedIn ||
          csrf !== "valid" ||
          request.raw !== undefined ||
          request.contentType !== "application/x-www-form-urlencoded";
        if (request.method === "POST" && guarded && !/^\/(login|signup)$/.test(request.path)) {
          assert.equal(
            await storedState(t(), seed.companyId),
            before,
            `${request.method} ${url} changed stored data (answered ${response.statusCode})`,
          );
        }
      }),
      { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}) },
    );
    // The session survived the run (nothing logged it out but /logout, which is not fuzzed).
    assert.equal((await seed.client.get("/customers")).statusCode, 200);
    assert.ok(
      (statuses.get(200) ?? 0) > 0 && (statuses.get(403) ?? 0) > 0,
      `statuses seen: ${JSON.stringify([...statuses])}`,
    );
  });

  it(`answers ${UPLOAD_RUNS} abusive multipart uploads to "Upload a contract" in time and never with a 5xx`, {
    timeout: 10 * 60_000,
  }, async () => {
    const cookie = [...seed.client.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    const samples = {
      pdf: await plainPdf(),
      encrypted: await plainPdf(["secret"], { userPassword: "pw", ownerPassword: "owner" }),
      bomb: bombPdf(1024 * 1024 * 1024, { into: "page" }),
    };
    await fc.assert(
      fc.asyncProperty(abusiveUploads([["_csrf", seed.csrf]], samples), async (upload) => {
        const startedAt = performance.now();
        const response = await t().call({
          method: "POST",
          url: "/upload-contract",
          headers: { cookie, "content-type": upload.contentType },
          payload: upload.payload,
        });
        const ms = performance.now() - startedAt;
        assert.ok(
          response.statusCode < 500,
          `${upload.family} answered ${response.statusCode}: ${response.body.slice(0, 300)}`,
        );
        assert.ok(ms < UPLOAD_MAX_MS, `${upload.family} took ${Math.round(ms)} ms`);
      }),
      { numRuns: UPLOAD_RUNS, ...(SEED !== undefined ? { seed: SEED } : {}) },
    );
  });

  it("refuses a NUL in any field or field name of every form with 400, storing nothing; a broken surrogate is never a 5xx", async () => {
    const cookie = [...seed.client.cookies].map(([k, v]) => `${k}=${v}`).join("; ");
    // The fields each form reads (FIELD_NAMES holds them all); forms that read none get one anyway.
    const FIELDS: Record<string, string[]> = {
      "/customers": ["name", "external_id", "email", "domain", "country", "payment_terms_days"],
      "/customers/:customer": [
        "name",
        "external_id",
        "email",
        "domain",
        "country",
        "address",
        "registration_number",
        "payment_terms_days",
        "tax_id",
        "invoice_memo",
        "invoice_delivery",
      ],
      "/settings/invoice-profile": [
        "legal_name",
        "address",
        "tax_id",
        "payment_instructions",
        "invoice_footer",
        "paper_size",
        "payment_terms_days",
      ],
      "/contracts/sample": ["customer_id"],
      "/contracts/:contract/rules": [
        "type",
        "model",
        "metric",
        "amount",
        "rate",
        "frequency",
        "monthly_cap",
        "name",
        "effective_date",
        "action",
      ],
      "/contracts/:contract/rules/change": [
        "rule_id",
        "amount",
        "rate",
        "monthly_cap",
        "name",
        "effective_date",
        "action",
      ],
      "/contracts/:contract/credits": ["amount", "type", "name", "starts_on", "expires_on", "metrics", "priority"],
      "/usage/:event/void": ["reason"],
      "/invoices/project": ["contract", "billing_period_start", "billing_period_end"],
      "/settings/api-keys": ["name", "scopes", "expires_on"],
      "/webhooks": ["url", "description", "events"],
      "/webhooks/:endpoint": ["url", "description", "events", "enabled"],
      "/webhooks/:endpoint/status": ["enabled"],
      "/login": ["email", "password", "next"],
      "/signup": ["company", "email", "password"],
    };
    // Each request changes one thing; these would delete, rotate, revoke or reach out for real if not refused.
    const destructive = /\/(delete|rotate|revoke|test|resend)$/;
    const fill = (route: string) =>
      route
        .replace(":contract", seed.contractId)
        .replace(":customer", seed.customerId)
        .replace(":endpoint", seed.endpointId)
        .replace(":key", seed.keyId)
        .replace(":event", "no-such-event")
        .replace(":delivery", "00000000-0000-0000-0000-000000000000");
    const post = (path: string, body: string) =>
      t().call({
        method: "POST",
        url: path,
        headers: { cookie, "content-type": "application/x-www-form-urlencoded" },
        payload: body,
      });
    for (const route of FORM_ROUTES) {
      const path = fill(route);
      for (const name of [...(FIELDS[route] ?? ["name"]), "zz\u0000"]) {
        const nul = name.includes("\u0000")
          ? formBody({ _csrf: seed.csrf, [name]: "x" })
          : formBody({ _csrf: seed.csrf, [name]: `a\u0000b` });
        const before = await storedState(t(), seed.companyId);
        const refused = await post(path, nul);
        assert.equal(
          refused.statusCode,
          400,
          `${path} ${JSON.stringify(name)}: ${refused.statusCode} ${refused.body.slice(0, 200)}`,
        );
        assert.equal(
          await storedState(t(), seed.companyId),
          before,
          `${path} ${JSON.stringify(name)} changed stored data`,
        );
        if (destructive.test(route) || name.includes("\u0000")) continue;
        // URL-encoded UTF-8 of a lone surrogate is no UTF-8 at all: refused (invalid_encoding), never read as U+FFFD.
        const broken = await post(path, `_csrf=${encodeURIComponent(seed.csrf)}&${name}=%ED%A0%80x`);
        assert.equal(
          broken.statusCode,
          400,
          `${path} ${name}=%ED%A0%80: ${broken.statusCode} ${broken.body.slice(0, 200)}`,
        );
      }
    }
  });
});
