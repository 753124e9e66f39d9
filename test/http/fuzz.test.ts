/**
 * Fuzzing the public API (issue 8, item 4): thousands of generated bad requests to every /v1/billing/* and
 * /v1/webhook-endpoints/* route, with valid, missing and garbage credentials. Whatever arrives, the service
 * must answer in time, never with a 5xx, every 4xx as `{ error, code, ... }`, and store nothing.
 *
 * The write requests are invalid by construction: each carries at least one break (an unknown field, a
 * field of the wrong type, a missing required field, or a value the service refuses such as an unknown
 * contract or currency), so that the stored state of the fuzzing company must be exactly the same after
 * every single request. Reads may answer 200.
 *
 * A second property sends otherwise valid writes whose strings are odd (bidi and zero-width marks, controls,
 * unpaired surrogates, NUL): those may succeed, but a string PostgreSQL cannot store as sent must be a 400,
 * and what is stored must come back as it was sent.
 *
 * FUZZ_RUNS=n sets the number of requests of the main property (default 2500 per engine; the second gets a
 * fifth of it); FUZZ_SEED=n replays a run (fast-check prints the seed and the shrunk request of a failure).
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { performance } from "node:perf_hooks";
import { before, it, type TestContext } from "node:test";
import fc from "fast-check";
import type { LightMyRequestResponse } from "fastify";
import { isCalendarMonth } from "../../src/domain/kernel/billing-period.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import {
  anyJson,
  anyNumber,
  anyString,
  DATE_STRINGS,
  dateLike,
  encodedBody,
  NUMBER_STRINGS,
  oddString,
  otherThan,
  percentEncode,
  RAW_SEGMENTS,
  randomId,
  rawBody,
  storedState,
  timestampLike,
  abusiveUploads,
  type JsonType,
  percentEscaped,
  withMalformedUtf8,
} from "../support/fuzz-generators.js";
import { bombPdf, plainPdf } from "../support/uploads.js";

const RUNS = Math.max(1, Number(process.env.FUZZ_RUNS ?? 2500));
/** Abusive uploads per engine: a few of them are read by a child process (a second each, a bomb more). */
const UPLOAD_RUNS = Math.max(10, Math.round(RUNS / 125));
const SEED = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;

type Method = "GET" | "POST" | "PUT" | "PATCH" | "DELETE";
type Auth = "valid" | "x-api-key" | "limited" | "none" | "garbage";

interface FuzzRequest {
  /** The route, as in the route files: what the statistics group by. */
  route: string;
  method: Method;
  url: string;
  headers: Record<string, string>;
  /** Text, or bytes (a multipart body). */
  payload?: string | Buffer;
  auth: Auth;
  /** A write that must not succeed: its body or its ids are broken by construction. */
  mustFail: boolean;
}

// ---------------------------------------------------------------------------------------------------------
// Values

/** Values that suit a known query parameter (so that the service, not only the schema, sees them). */
function queryValueFor(key: string): fc.Arbitrary<string> {
  if (key === "limit") return fc.constantFrom(...NUMBER_STRINGS, "100", "101", "1", "50", "-5", "1e3", "2".repeat(30));
  if (key === "from" || key === "to") return dateLike;
  if (key === "status") return fc.constantFrom("draft", "active", "rated", "accepted", "completed", "ACTIVE", "x", "");
  return fc.oneof(
    oddString,
    fc.uuid(),
    fc.constantFrom("fuzz-customer-test", "INV-000001", "domestic_wire", "INV-", "%"),
  );
}

/** A query string: known and unknown keys, repeated keys, arrays, huge and negative limits, bad dates. */
function queryString(knownKeys: string[]): fc.Arbitrary<string> {
  const keys = [...knownKeys, "limit", "starting_after"];
  const key = fc.oneof(
    { arbitrary: fc.constantFrom(...keys), weight: 6 },
    {
      arbitrary: fc.constantFrom("limit[]", "limit[0]", "__proto__", "constructor", "", "status[]", "from[gte]"),
      weight: 1,
    },
    { arbitrary: oddString, weight: 1 },
  );
  const anyValue = fc.oneof(
    fc.constantFrom(...NUMBER_STRINGS, ...DATE_STRINGS),
    oddString,
    fc.integer({ min: 256, max: 20_000 }).map((n) => "q".repeat(n)),
  );
  const typedPair = fc.constantFrom(...keys).chain((k) => queryValueFor(k).map((v) => `${k}=${percentEncode(v)}`));
  const pair = fc.oneof(
    { arbitrary: typedPair, weight: 6 },
    { arbitrary: fc.tuple(key, anyValue).map(([k, v]) => `${percentEncode(k)}=${percentEncode(v)}`), weight: 3 },
    { arbitrary: key.map((k) => percentEncode(k)), weight: 1 },
    { arbitrary: fc.constantFrom(...RAW_SEGMENTS).map((s) => `limit=${s}`), weight: 1 },
    { arbitrary: fc.constantFrom("&", "&&", "=", "==", "?", "#x", ";"), weight: 1 },
  );
  // Mostly one parameter that suits its key, so that a single odd value is not hidden behind another one's
  // 400; sometimes a pile of anything, repeated keys included.
  return fc.oneof(
    { arbitrary: typedPair, weight: 4 },
    { arbitrary: fc.array(typedPair, { minLength: 2, maxLength: 3 }).map((pairs) => pairs.join("&")), weight: 2 },
    {
      arbitrary: fc
        .tuple(fc.array(pair, { maxLength: 6 }), fc.boolean())
        .map(([pairs, repeat]) => (repeat && pairs.length > 0 ? [...pairs, pairs[0]!] : pairs).join("&")),
      weight: 2,
    },
  );
}

// ---------------------------------------------------------------------------------------------------------
// Bodies that are broken by construction

interface FieldSpec {
  /** JSON types the schema accepts (so that anything else is a break). */
  accepts: JsonType[];
  /** Values that may well be valid. */
  good: fc.Arbitrary<unknown>;
}

interface BodySpec {
  fields: Record<string, FieldSpec>;
  required: string[];
  /** Overrides that pass the schema but that the service refuses without storing anything. */
  refused?: fc.Arbitrary<Record<string, unknown>>;
}

const setOwn = (target: Record<string, unknown>, key: string, value: unknown) =>
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });

/** A body of the endpoint's fields with at least one break; never a body the endpoint would accept. */
function brokenBody(spec: BodySpec): fc.Arbitrary<Record<string, unknown>> {
  const names = Object.keys(spec.fields);
  const unknownKey = fc
    .oneof(
      oddString,
      fc.constantFrom(
        "id",
        "object",
        "company_id",
        "created_at",
        "__proto__",
        "constructor",
        "prototype",
        "NAME",
        " name",
      ),
    )
    .filter((k) => !names.includes(k));
  type Break = (body: Record<string, unknown>) => void;
  const breaks: fc.Arbitrary<Break>[] = [
    fc.tuple(unknownKey, anyJson).map(
      ([k, v]): Break =>
        (body) =>
          setOwn(body, k, v),
    ),
    ...names.map((name) =>
      otherThan(spec.fields[name]!.accepts).map(
        (v): Break =>
          (body) =>
            setOwn(body, name, v),
      ),
    ),
  ];
  if (spec.required.length > 0) {
    breaks.push(
      fc.constantFrom(...spec.required).map(
        (name): Break =>
          (body) =>
            void delete body[name],
      ),
    );
  }
  if (spec.refused)
    breaks.push(
      spec.refused.map(
        (o): Break =>
          (body) =>
            Object.entries(o).forEach(([k, v]) => setOwn(body, k, v)),
      ),
    );
  const model = Object.fromEntries(names.map((n) => [n, spec.fields[n]!.good]));
  return fc
    .tuple(fc.record(model, { requiredKeys: [] }), fc.array(fc.oneof(...breaks), { minLength: 1, maxLength: 3 }))
    .map(([base, chosen]) => {
      const body: Record<string, unknown> = { ...(base as Record<string, unknown>) };
      for (const apply of chosen) apply(body);
      return body;
    });
}

/** Any JSON value at all, never a valid body: objects get an unknown field. */
const junkBody: fc.Arbitrary<unknown> = fc
  .tuple(anyJson, oddString)
  .map(([value, key]) =>
    value !== null && typeof value === "object" && !Array.isArray(value)
      ? setOwn({ ...value }, `zz_unknown_${key}`, true)
      : value,
  );

// ---------------------------------------------------------------------------------------------------------
// The endpoints

interface Seed {
  key: string;
  limitedKey: string;
  companyId: string;
  customerId: string;
  contractId: string;
  ruleId: string;
  endpointId: string;
  eventId: string;
  invoiceNumber: string;
}

interface EndpointModel {
  route: string;
  method: Method;
  weight?: number;
  /** Requests to this route; each says whether it must fail. */
  requests: fc.Arbitrary<{
    url: string;
    body?: { payload: string; contentType: string | undefined };
    mustFail: boolean;
  }>;
}

function endpoints(seed: Seed): EndpointModel[] {
  const realOr = (real: string) =>
    fc.oneof({ arbitrary: fc.constant(real), weight: 1 }, { arbitrary: randomId, weight: 2 });
  const fakeContract = fc.oneof(
    oddString,
    fc.constantFrom("", "fuzz-customer-test ", "FUZZ-CUSTOMER-TEST", "x".repeat(256)),
  );

  const customerSpec: BodySpec = {
    fields: {
      name: { accepts: ["string"], good: fc.oneof(fc.constant("Acme"), anyString) },
      external_id: { accepts: ["string"], good: anyString },
      email: { accepts: ["string"], good: fc.oneof(fc.constant("billing@acme.example"), anyString) },
      domain: { accepts: ["string"], good: fc.oneof(fc.constant("acme.example"), anyString) },
      country: { accepts: ["string"], good: anyString },
      address: { accepts: ["string"], good: anyString },
      registration_number: { accepts: ["string"], good: anyString },
      payment_terms_days: { accepts: ["number"], good: anyNumber },
    },
    required: ["name"],
  };

  const ruleFields = (nullable: boolean): Record<string, FieldSpec> => {
    const n = (types: JsonType[]): JsonType[] => (nullable ? [...types, "null"] : types);
    const decimal = fc.oneof(anyNumber, fc.constantFrom(...NUMBER_STRINGS));
    return {
      id: { accepts: ["string"], good: fc.oneof(fc.constant("rule_fuzz"), anyString) },
      name: { accepts: n(["string"]), good: anyString },
      type: { accepts: n(["string"]), good: fc.constantFrom("usage", "subscription", "minimum", "one_time", "x") },
      model: { accepts: n(["string"]), good: fc.constantFrom("flat", "percentage", "tiered") },
      amount: { accepts: n(["number", "string"]), good: decimal },
      rate: { accepts: n(["number", "string"]), good: decimal },
      metric: { accepts: n(["string"]), good: fc.oneof(fc.constantFrom("domestic_wire", "zz_metric"), anyString) },
      frequency: { accepts: n(["string"]), good: fc.constantFrom("monthly", "yearly") },
      monthly_cap: { accepts: n(["number", "string"]), good: decimal },
      currency: { accepts: n(["string"]), good: fc.constantFrom("USD", "usd", "EUR", "US") },
      counterparty: { accepts: n(["string"]), good: anyString },
      counterparty_side: { accepts: n(["string"]), good: anyString },
      pair: { accepts: n(["string"]), good: anyString },
    };
  };
  // Any currency but the contract's (USD) is refused, whatever the other fields say.
  const refusedRule = fc.record({ currency: fc.constantFrom("ZZZ", "EUR", "XXX", "\u00dcSD", "JPY") });

  const eventFields: Record<string, FieldSpec> = {
    external_contract_id: { accepts: ["string"], good: fc.oneof(fc.constant(seed.contractId), fakeContract) },
    event_id: { accepts: ["string"], good: fc.oneof(fc.constant(`evt_${randomBytes(4).toString("hex")}`), anyString) },
    metric: { accepts: ["string"], good: fc.oneof(fc.constantFrom("domestic_wire", "international_wire"), anyString) },
    quantity: { accepts: ["number", "string"], good: fc.oneof(anyNumber, fc.constantFrom(...NUMBER_STRINGS)) },
    timestamp: { accepts: ["string"], good: timestampLike },
    fee_amount: { accepts: ["number", "string"], good: fc.oneof(anyNumber, fc.constantFrom(...NUMBER_STRINGS)) },
    applied_rate: { accepts: ["number", "string"], good: fc.oneof(anyNumber, fc.constantFrom(...NUMBER_STRINGS)) },
    counterparty: { accepts: ["string"], good: anyString },
    counterparty_side: { accepts: ["string"], good: anyString },
    pair: { accepts: ["string"], good: anyString },
  };
  const brokenEvent = fc.oneof(
    {
      arbitrary: brokenBody({
        fields: eventFields,
        required: ["external_contract_id", "event_id", "metric", "quantity", "timestamp"],
        refused: fc.oneof(
          // a contract that does not exist, or a metric the contract does not have: rejected, nothing stored
          fc.record({ external_contract_id: fakeContract }),
          fc.record({
            metric: fc.oneof(oddString, fc.constantFrom("zz_unknown_metric", "DOMESTIC_WIRE", "domestic_wire ")),
          }),
        ),
      }),
      weight: 9,
    },
    { arbitrary: junkBody, weight: 1 },
  );
  const usageBody = fc.oneof(
    { arbitrary: fc.array(brokenEvent, { minLength: 1, maxLength: 8 }).map((events) => ({ events })), weight: 6 },
    {
      arbitrary: brokenBody({
        fields: { events: { accepts: ["array"], good: fc.array(brokenEvent, { maxLength: 3 }) } },
        required: ["events"],
      }),
      weight: 2,
    },
    { arbitrary: fc.constantFrom({ events: [] }, { events: null }, { events: {} }), weight: 1 },
    {
      // too many events: small ones, so that the 400 is about the count and not a 413
      arbitrary: fc
        .array(
          fc.record({
            external_contract_id: fc.constant(seed.contractId),
            event_id: fc.uuid(),
            metric: fc.constant("zz_unknown_metric"),
            quantity: fc.nat(),
          }),
          { minLength: 101, maxLength: 120 },
        )
        .map((events) => ({ events })),
      weight: 1,
    },
    { arbitrary: junkBody, weight: 1 },
  );

  const projectSpec: BodySpec = {
    fields: {
      external_contract_id: { accepts: ["string"], good: fc.oneof(fc.constant(seed.contractId), fakeContract) },
      billing_period_start: { accepts: ["string"], good: dateLike },
      billing_period_end: { accepts: ["string"], good: dateLike },
    },
    required: ["external_contract_id", "billing_period_start", "billing_period_end"],
    refused: fc.oneof(
      fc.record({ external_contract_id: fakeContract }),
      // not exactly one calendar month
      fc
        .tuple(dateLike, dateLike)
        .filter(([start, end]) => !isCalendarMonth(start, end))
        .map(([start, end]) => ({ billing_period_start: start, billing_period_end: end })),
      // a whole month outside the contract's term (2026-03-15..2027-03-14)
      fc
        .tuple(
          fc.oneof(fc.integer({ min: 1, max: 2025 }), fc.integer({ min: 2028, max: 9999 })),
          fc.integer({ min: 1, max: 12 }),
        )
        .map(([year, month]) => {
          const y = String(year).padStart(4, "0");
          const m = String(month).padStart(2, "0");
          const last = new Date(Date.UTC(2001, month, 0)).getUTCDate(); // 2001: not a leap year, so February ends on the 28th
          return { billing_period_start: `${y}-${m}-01`, billing_period_end: `${y}-${m}-${last}` };
        }),
    ),
  };

  // No URL here may make the service resolve a host name: refused by syntax, scheme or address alone.
  const refusedUrl = fc.oneof(
    fc.constantFrom(
      "ftp://example.com/hook",
      "http://example.com/hook",
      "https://user:pw@example.com/",
      "https://127.0.0.1/x",
      "https://[::1]/x",
      "https://10.0.0.1/x",
      "https://169.254.169.254/latest",
      "https://[::ffff:127.0.0.1]/",
      "https://0x7f.1/",
      "javascript:alert(1)",
      "https://exa mple.com/",
      "https://example.com/\n",
      "https://",
      "//example.com",
      "https://:443/",
      "https://example.com:0/",
      "https://example.com:99999/",
      "data:text/plain,x",
      "file:///etc/passwd",
      `https://a.example/${"x".repeat(2100)}`,
      "https://2130706433/",
      "https://[fe80::1%25eth0]/",
    ),
    oddString.filter((s) => !/^https?:/i.test(s) && s.length > 0),
  );
  const webhookFields = (patch: boolean): Record<string, FieldSpec> => ({
    url: { accepts: ["string"], good: fc.oneof(refusedUrl, fc.constant("https://93.184.215.14/hook")) },
    events: {
      accepts: ["array"],
      good: fc.oneof(
        fc.constant(["customer.created"]),
        fc.array(fc.constantFrom("customer.created", "contract.created", "invoice.created", "*"), { maxLength: 3 }),
      ),
    },
    description: { accepts: patch ? ["string", "null"] : ["string"], good: anyString },
    ...(patch ? { enabled: { accepts: ["boolean"], good: fc.boolean() } } : {}),
  });

  const bodyOf = (spec: BodySpec, raw: (literal: string) => string) =>
    fc.oneof(
      { arbitrary: encodedBody(brokenBody(spec)), weight: 7 },
      { arbitrary: encodedBody(junkBody), weight: 2 },
      { arbitrary: rawBody(raw), weight: 2 },
    );
  /** A body for a route that takes none: ignored, or refused when it is not JSON. */
  const strayBody = fc
    .option(
      fc.oneof(
        encodedBody(anyJson),
        rawBody((l) => l),
      ),
      { freq: 2 },
    )
    .map((b) => b ?? undefined);

  const lists = (path: string, keys: string[]) =>
    fc
      .tuple(queryString(keys), fc.integer({ min: 0, max: 9 }))
      .map(([query, dice]) => ({ url: dice > 0 ? `${path}?${query}` : path, mustFail: false }));

  const C = "/v1/billing/contracts";
  const W = "/v1/webhook-endpoints";
  const eventsRaw = (lit: string) =>
    `{"events":[{"external_contract_id":"${seed.contractId}","event_id":"raw-1","metric":"zz_unknown_metric","quantity":${lit},"timestamp":"2026-03-20T10:00:00Z"},` +
    `{"external_contract_id":${lit},"event_id":"raw-2","metric":"domestic_wire","quantity":1,"timestamp":"2026-03-20T10:00:00Z","zz":1},` +
    `{"external_contract_id":"${seed.contractId}","event_id":${lit},"metric":"zz_unknown_metric","quantity":1,"timestamp":${lit}}]}`;

  return [
    {
      route: "POST /v1/billing/customers",
      method: "POST",
      requests: bodyOf(customerSpec, (lit) => `{"name":${lit},"payment_terms_days":${lit},"zz_unknown":true}`).map(
        (body) => ({
          url: "/v1/billing/customers",
          body,
          mustFail: true,
        }),
      ),
    },
    {
      route: "GET /v1/billing/customers",
      method: "GET",
      weight: 2,
      requests: lists("/v1/billing/customers", ["external_id"]),
    },
    { route: "GET /v1/billing/contracts", method: "GET", weight: 2, requests: lists(C, ["status"]) },
    {
      route: "POST /v1/billing/contracts",
      method: "POST",
      requests: bodyOf(
        {
          fields: { customer_id: { accepts: ["string"], good: fc.oneof(fc.constant(seed.customerId), anyString) } },
          required: ["customer_id"],
          refused: fc.record({
            customer_id: fc.oneof(
              fc.uuid(),
              anyString,
              fc.constant(` ${seed.customerId}`),
              fc.constant(`${seed.customerId}0`),
            ),
          }),
        },
        (lit) => `{"customer_id":${lit}}`,
      ).map((body) => ({ url: C, body, mustFail: true })),
    },
    {
      route: "GET /v1/billing/contracts/:ext_id",
      method: "GET",
      requests: fc
        .tuple(realOr(seed.contractId), queryString([]))
        .map(([id, q]) => ({ url: `${C}/${id}?${q}`, mustFail: false })),
    },
    {
      route: "GET /v1/billing/contracts/:ext_id/pricing",
      method: "GET",
      requests: realOr(seed.contractId).map((id) => ({ url: `${C}/${id}/pricing`, mustFail: false })),
    },
    {
      route: "POST /v1/billing/contracts/:ext_id/pricing-rules",
      method: "POST",
      requests: fc
        .tuple(
          realOr(seed.contractId),
          bodyOf(
            { fields: ruleFields(false), required: [], refused: refusedRule },
            (lit) => `{"metric":"zz_m","rate":${lit},"currency":"ZZZ"}`,
          ),
        )
        .map(([id, body]) => ({ url: `${C}/${id}/pricing-rules`, body, mustFail: true })),
    },
    {
      route: "PUT /v1/billing/contracts/:ext_id/pricing-rules/:rule_id",
      method: "PUT",
      requests: fc
        .tuple(
          realOr(seed.contractId),
          realOr(seed.ruleId),
          bodyOf(
            { fields: ruleFields(true), required: [], refused: refusedRule },
            (lit) => `{"amount":${lit},"currency":"ZZZ"}`,
          ),
        )
        .map(([id, rule, body]) => ({ url: `${C}/${id}/pricing-rules/${rule}`, body, mustFail: true })),
    },
    {
      route: "POST /v1/billing/usage",
      method: "POST",
      requests: fc
        .oneof({ arbitrary: encodedBody(usageBody), weight: 8 }, { arbitrary: rawBody(eventsRaw), weight: 3 })
        .map((body) => ({ url: "/v1/billing/usage", body, mustFail: true })),
    },
    {
      route: "GET /v1/billing/usage",
      method: "GET",
      weight: 2,
      requests: lists("/v1/billing/usage", ["contract", "metric", "from", "to", "status"]),
    },
    {
      route: "GET /v1/billing/usage/:event_id",
      method: "GET",
      requests: realOr(seed.eventId).map((id) => ({ url: `/v1/billing/usage/${id}`, mustFail: false })),
    },
    {
      route: "GET /v1/billing/invoices",
      method: "GET",
      weight: 2,
      requests: lists("/v1/billing/invoices", ["contract", "status", "from", "to"]),
    },
    {
      route: "POST /v1/billing/invoices/project",
      method: "POST",
      requests: bodyOf(
        projectSpec,
        (lit) =>
          `{"external_contract_id":${lit},"billing_period_start":"2026-03-01","billing_period_end":"2026-03-31"}`,
      ).map((body) => ({ url: "/v1/billing/invoices/project", body, mustFail: true })),
    },
    {
      route: "GET /v1/billing/invoices/:number",
      method: "GET",
      requests: realOr(seed.invoiceNumber).map((id) => ({ url: `/v1/billing/invoices/${id}`, mustFail: false })),
    },
    {
      route: "POST /v1/webhook-endpoints",
      method: "POST",
      requests: bodyOf(
        { fields: webhookFields(false), required: ["url"], refused: fc.record({ url: refusedUrl }) },
        (lit) => `{"url":${lit},"events":["zz.unknown"]}`,
      ).map((body) => ({ url: W, body, mustFail: true })),
    },
    { route: "GET /v1/webhook-endpoints", method: "GET", requests: lists(W, []) },
    {
      route: "GET /v1/webhook-endpoints/:id",
      method: "GET",
      requests: realOr(seed.endpointId).map((id) => ({ url: `${W}/${id}`, mustFail: false })),
    },
    {
      route: "PATCH /v1/webhook-endpoints/:id",
      method: "PATCH",
      requests: fc
        .tuple(
          realOr(seed.endpointId),
          bodyOf(
            { fields: webhookFields(true), required: [], refused: fc.record({ url: refusedUrl }) },
            (lit) => `{"description":${lit},"enabled":"yes"}`,
          ),
        )
        .map(([id, body]) => ({ url: `${W}/${id}`, body, mustFail: true })),
    },
    {
      // would change the secret of a real endpoint: random ids only
      route: "POST /v1/webhook-endpoints/:id/rotate-secret",
      method: "POST",
      requests: fc
        .tuple(randomId, strayBody)
        .map(([id, body]) => ({ url: `${W}/${id}/rotate-secret`, body, mustFail: true })),
    },
    {
      route: "DELETE /v1/webhook-endpoints/:id",
      method: "DELETE",
      requests: fc.tuple(randomId, strayBody).map(([id, body]) => ({ url: `${W}/${id}`, body, mustFail: true })),
    },
    {
      route: "POST /v1/webhook-endpoints/:id/test",
      method: "POST",
      requests: fc
        .tuple(
          realOr(seed.endpointId),
          bodyOf(
            {
              fields: {
                type: {
                  accepts: ["string"],
                  good: fc.constantFrom("customer.created", "contract.created", "invoice.created", "*"),
                },
              },
              required: ["type"],
            },
            (lit) => `{"type":${lit},"zz":1}`,
          ),
        )
        .map(([id, body]) => ({ url: `${W}/${id}/test`, body, mustFail: true })),
    },
    {
      route: "GET /v1/webhook-endpoints/:id/deliveries",
      method: "GET",
      requests: realOr(seed.endpointId).map((id) => ({ url: `${W}/${id}/deliveries`, mustFail: false })),
    },
    {
      route: "POST /v1/webhook-endpoints/deliveries/:id/resend",
      method: "POST",
      requests: fc
        .tuple(randomId, strayBody)
        .map(([id, body]) => ({ url: `${W}/deliveries/${id}/resend`, body, mustFail: true })),
    },
    {
      // the agreement PDF needs no key: the token is the capability
      route: "GET /v1/agreements/:file",
      method: "GET",
      requests: randomId.map((id) => ({ url: `/v1/agreements/${id}`, mustFail: false })),
    },
  ];
}

const GARBAGE_AUTH: Record<string, string>[] = [
  { authorization: "Bearer" },
  { authorization: "Bearer " },
  { authorization: "Basic dXNlcjpwYXNz" },
  { authorization: `Bearer ${"k".repeat(600)}` },
  { authorization: "Bearer a b" },
  { authorization: "bearer\tsk_nope" },
  { authorization: "Bearer sk_test_0000000000000000" },
  { authorization: "Token sk_test_0000000000000000" },
  { authorization: "Bearer %00" },
  { authorization: "Bearer \u00e9\u00e8" },
  { "x-api-key": "sk_test_0000000000000000" },
  { "x-api-key": "k".repeat(5000) },
  { "x-api-key": "   x   " },
  { authorization: "   ", "x-api-key": "nope" },
];

function fuzzRequests(seed: Seed): fc.Arbitrary<FuzzRequest> {
  const models = endpoints(seed);
  const auth = fc.oneof(
    { arbitrary: fc.constant<Auth>("valid"), weight: 80 },
    { arbitrary: fc.constant<Auth>("x-api-key"), weight: 4 },
    { arbitrary: fc.constant<Auth>("limited"), weight: 4 },
    { arbitrary: fc.constant<Auth>("none"), weight: 4 },
    { arbitrary: fc.constant<Auth>("garbage"), weight: 8 },
  );
  return fc
    .tuple(
      // lists with a query string weigh double: their parameters reach SQL
      fc.oneof(
        ...models.map((m) => ({
          arbitrary: m.requests.map((r) => ({ ...r, route: m.route, method: m.method })),
          weight: m.weight ?? 1,
        })),
      ),
      auth,
      fc.constantFrom(...GARBAGE_AUTH),
    )
    .map(([request, mode, garbage]) => {
      const headers: Record<string, string> = {};
      if (mode === "valid") headers.authorization = `Bearer ${seed.key}`;
      if (mode === "x-api-key") headers["x-api-key"] = seed.key;
      if (mode === "limited") headers.authorization = `Bearer ${seed.limitedKey}`;
      if (mode === "garbage") Object.assign(headers, garbage);
      if (request.body?.contentType !== undefined) headers["content-type"] = request.body.contentType;
      const fuzz: FuzzRequest = {
        route: request.route,
        method: request.method,
        url: request.url,
        headers,
        ...(request.body ? { payload: request.body.payload } : {}),
        auth: mode,
        mustFail: request.mustFail,
      };
      return withShortString(fuzz);
    });
}

/** fast-check prints a failing request with this: long strings are cut. */
function withShortString<T extends FuzzRequest>(request: T): T {
  const cut = (text: string, max: number) =>
    text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
  Object.defineProperty(request, fc.toStringMethod, {
    value: () =>
      `${request.method} ${cut(request.url, 300)} auth=${request.auth} headers=${cut(JSON.stringify(request.headers), 300)}` +
      (request.payload === undefined ? "" : ` body=${cut(JSON.stringify(request.payload), 600)}`),
  });
  return request;
}

// ---------------------------------------------------------------------------------------------------------
// Checking one answer

/** Everything a write could change, for one company: row counts and a digest of the mutable columns. */

interface Stats {
  requests: number;
  byStatus: Map<number, number>;
  byRoute: Map<string, number>;
  maxMs: number;
  maxRequest: string;
  totalMs: number;
}

const newStats = (): Stats => ({
  requests: 0,
  byStatus: new Map(),
  byRoute: new Map(),
  maxMs: 0,
  maxRequest: "",
  totalMs: 0,
});

function report(t: TestContext, title: string, stats: Stats, startedAt: number): void {
  const statuses = [...stats.byStatus.entries()]
    .sort(([a], [b]) => a - b)
    .map(([s, n]) => `${s}:${n}`)
    .join(" ");
  t.diagnostic(
    `${title}: ${stats.requests} requests in ${((performance.now() - startedAt) / 1000).toFixed(1)} s; statuses ${statuses}; ` +
      `mean ${(stats.totalMs / Math.max(1, stats.requests)).toFixed(1)} ms, slowest ${stats.maxMs.toFixed(0)} ms (${stats.maxRequest})`,
  );
  t.diagnostic(`${title}: routes ${[...stats.byRoute.entries()].map(([r, n]) => `${r} ${n}`).join("; ")}`);
}

async function send(
  t: TestApp,
  request: FuzzRequest,
  stats: Stats,
): Promise<{ res: LightMyRequestResponse; ms: number }> {
  const started = performance.now();
  const res = await t.app.http.inject({
    method: request.method,
    url: request.url,
    headers: request.headers,
    ...(request.payload !== undefined ? { payload: request.payload } : {}),
  });
  const ms = performance.now() - started;
  stats.requests++;
  stats.byStatus.set(res.statusCode, (stats.byStatus.get(res.statusCode) ?? 0) + 1);
  stats.byRoute.set(request.route, (stats.byRoute.get(request.route) ?? 0) + 1);
  stats.totalMs += ms;
  if (ms > stats.maxMs) {
    stats.maxMs = ms;
    stats.maxRequest = `${request.method} ${request.url.slice(0, 80)} (${request.payload?.length ?? 0} bytes)`;
  }
  return { res, ms };
}

/**
 * No 5xx, and every 4xx is `{ error: string, code: string, ... }`. How long an answer took is reported (the
 * slowest, in the suite's summary), never asserted: a wall-clock limit fails on a busy machine, not on a slow
 * service; speed is the benchmarks' (docs/testing.md).
 */
function assertAnswer(res: LightMyRequestResponse): void {
  assert.ok(res.statusCode < 500, `answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
  if (res.statusCode >= 400) {
    let body: unknown;
    assert.doesNotThrow(
      () => (body = JSON.parse(res.body)),
      `a ${res.statusCode} whose body is not JSON: ${res.body.slice(0, 200)}`,
    );
    const error = body as { error?: unknown; code?: unknown };
    assert.equal(
      typeof error.error,
      "string",
      `a ${res.statusCode} without an error sentence: ${res.body.slice(0, 200)}`,
    );
    assert.equal(typeof error.code, "string", `a ${res.statusCode} without a code: ${res.body.slice(0, 200)}`);
    assert.match(error.code as string, /^[a-z0-9_]+$/, `code ${String(error.code)} is not snake_case`);
    assert.ok((error.error as string).length > 0, "an empty error sentence");
  }
}

/** Whether some string in a JSON value (keys included) holds an unpaired surrogate. */
function hasLoneSurrogate(value: unknown): boolean {
  const lone = /[\ud800-\udfff]/u;
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const item = stack.pop();
    if (typeof item === "string") {
      if (lone.test(item)) return true;
    } else if (item !== null && typeof item === "object") {
      for (const [key, child] of Object.entries(item)) {
        if (lone.test(key)) return true;
        stack.push(child);
      }
    }
  }
  return false;
}

// ---------------------------------------------------------------------------------------------------------

async function seedCompany(t: TestApp, name: string): Promise<Seed> {
  const { companyId, key } = await t.newCompany({ name });
  const limited = await t.app.services.access.createApiKey(companyId, { scopes: ["usage:read"] });
  const call = async (method: Method, url: string, payload?: unknown) => {
    const res = await t.call({
      method,
      url,
      key,
      ...(payload !== undefined ? { payload: payload as Record<string, unknown> } : {}),
    });
    assert.ok(res.statusCode < 300, `${method} ${url}: ${res.statusCode} ${res.body}`);
    return res.json() as Record<string, unknown>;
  };
  // The endpoint first, so that the customer and contract below leave deliveries behind (pending: no worker
  // runs in tests). A public IP literal needs no DNS.
  const endpoint = await call("POST", "/v1/webhook-endpoints", {
    url: "https://93.184.215.14/hook",
    description: "fuzz",
  });
  const customer = await call("POST", "/v1/billing/customers", {
    name: "Fuzz Customer",
    external_id: `fuzz-${randomBytes(3).toString("hex")}`,
  });
  const contract = await call("POST", "/v1/billing/contracts", { customer_id: customer.id });
  const pricing = await call("GET", `/v1/billing/contracts/${String(contract.id)}/pricing`);
  const eventId = `seed-${randomBytes(6).toString("hex")}`;
  await call("POST", "/v1/billing/usage", {
    events: [
      {
        external_contract_id: contract.id,
        event_id: eventId,
        metric: "domestic_wire",
        quantity: 2,
        timestamp: "2026-03-20T10:00:00Z",
      },
    ],
  });
  const invoices = await call("GET", `/v1/billing/invoices?contract=${String(contract.id)}`);
  const deliveries = await call("GET", `/v1/webhook-endpoints/${String(endpoint.id)}/deliveries`);
  assert.ok((deliveries.data as unknown[]).length >= 2, "the seed's customer and contract left pending deliveries");
  return {
    key,
    limitedKey: limited.key,
    companyId,
    customerId: String(customer.id),
    contractId: String(contract.id),
    ruleId: String((pricing.rules as { id: string }[])[0]!.id),
    endpointId: String(endpoint.id),
    eventId,
    invoiceNumber: String((invoices.data as { number: string }[])[0]!.number),
  };
}

describeEachEngine(
  "fuzz: bad requests to every public endpoint",
  (t) => {
    let seed: Seed;
    before(async () => {
      seed = await seedCompany(t(), "Fuzz Co");
    });

    it(`answers ${RUNS} generated bad requests in time, never 5xx, always { error, code }, storing nothing`, {
      timeout: 30 * 60_000,
    }, async (tctx) => {
      assert.equal(seed.contractId, "fuzz-customer-test");
      const stats = newStats();
      const startedAt = performance.now();
      const initial = await storedState(t(), seed.companyId);
      await fc.assert(
        fc.asyncProperty(fuzzRequests(seed), async (request) => {
          // before and after each request, so that a failure names the request that wrote (and shrinks)
          const stateBefore = await storedState(t(), seed.companyId);
          const { res } = await send(t(), request, stats);
          assertAnswer(res);
          if (request.auth === "none" || request.auth === "garbage") {
            assert.ok(res.statusCode >= 400, `answered ${res.statusCode} without a valid key`);
            if (res.statusCode === 401)
              assert.match((res.json() as { code: string }).code, /^(missing|invalid)_api_key$/);
          }
          if (request.mustFail) {
            if (request.route === "POST /v1/billing/usage" && res.statusCode === 200) {
              // a well-formed batch of bad events: each one rejected (or a copy of the stored seed event)
              const result = res.json() as { accepted: number; events: { status: string; duplicate?: boolean }[] };
              assert.ok(
                result.events.every((e) => e.status === "rejected" || e.duplicate === true),
                `an event was accepted: ${res.body.slice(0, 300)}`,
              );
            } else {
              assert.ok(res.statusCode >= 400, `a broken write answered ${res.statusCode}: ${res.body.slice(0, 300)}`);
            }
          }
          assert.equal(
            await storedState(t(), seed.companyId),
            stateBefore,
            `the request changed stored data (answered ${res.statusCode})`,
          );
        }),
        { numRuns: RUNS, ...(SEED !== undefined ? { seed: SEED } : {}) },
      );
      assert.equal(await storedState(t(), seed.companyId), initial, "stored data changed during the run");
      report(tctx, "bad requests", stats, startedAt);
    });

    it(`answers ${UPLOAD_RUNS} abusive multipart uploads without a 5xx, each refusal as { error, code }, storing nothing`, {
      timeout: 10 * 60_000,
    }, async (tctx) => {
      const samples = {
        pdf: await plainPdf(),
        encrypted: await plainPdf(["secret"], { userPassword: "pw", ownerPassword: "owner" }),
        bomb: bombPdf(1024 * 1024 * 1024, { into: "page" }),
      };
      // Terms that pass, for the seed's own contract id: a file that passes every check is refused all the same
      // (409 contract_exists), so that every upload must leave the stored state as it was.
      const terms = JSON.stringify({
        customer: { id: seed.customerId },
        contract_id: seed.contractId,
        start_date: "2026-01-01",
        currency: "USD",
        rules: [{ type: "usage", metric: "api_call", amount: "1" }],
      });
      const stats = newStats();
      const startedAt = performance.now();
      await fc.assert(
        fc.asyncProperty(abusiveUploads([["terms", terms]], samples), async (upload) => {
          const stateBefore = await storedState(t(), seed.companyId);
          const request: FuzzRequest = {
            route: `POST /v1/billing/contracts/upload (${upload.family})`,
            method: "POST",
            url: "/v1/billing/contracts/upload",
            headers: { authorization: `Bearer ${seed.key}`, "content-type": upload.contentType },
            payload: upload.payload,
            auth: "valid",
            mustFail: true,
          };
          const { res } = await send(t(), request, stats);
          assertAnswer(res);
          assert.ok(res.statusCode >= 400, `${upload.family}: answered ${res.statusCode}`);
          assert.equal(
            await storedState(t(), seed.companyId),
            stateBefore,
            `${upload.family}: the upload changed stored data (answered ${res.statusCode})`,
          );
        }),
        { numRuns: UPLOAD_RUNS, ...(SEED !== undefined ? { seed: SEED } : {}) },
      );
      report(tctx, "abusive uploads", stats, startedAt);
    });

    it("refuses bytes that are not UTF-8 with 400 invalid_encoding, in bodies and URLs, storing nothing", {
      timeout: 30 * 60_000,
    }, async () => {
      const statesBefore = await storedState(t(), seed.companyId);
      // A valid write with the bytes inside one of its strings: only the encoding is wrong.
      const bodies: [string, string, (text: string) => string][] = [
        ["POST", "/v1/billing/customers", (text) => `{"name":"${text}"}`],
        [
          "POST",
          "/v1/billing/usage",
          (text) =>
            `{"events":[{"external_contract_id":"${seed.contractId}","event_id":"${text}","metric":"domestic_wire","quantity":1,"timestamp":"2026-03-20T10:00:00Z"}]}`,
        ],
        [
          "POST",
          `/v1/billing/contracts/${seed.contractId}/pricing-rules`,
          (text) => `{"metric":"domestic_wire","amount":"1.00","name":"${text}"}`,
        ],
        [
          "PUT",
          `/v1/billing/contracts/${seed.contractId}/pricing-rules/${seed.ruleId}`,
          (text) => `{"name":"${text}"}`,
        ],
        ["PATCH", `/v1/webhook-endpoints/${seed.endpointId}`, (text) => `{"description":"${text}"}`],
      ];
      const urls = [
        (escaped: string) => `/v1/billing/customers?starting_after=${escaped}`,
        (escaped: string) => `/v1/billing/usage/${escaped}`,
        (escaped: string) => `/v1/billing/contracts/${escaped}`,
        (escaped: string) => `/v1/billing/invoices?status=${escaped}`,
      ];
      await fc.assert(
        fc.asyncProperty(
          withMalformedUtf8,
          fc.nat(bodies.length - 1),
          fc.nat(urls.length - 1),
          async ({ before, bytes, after }, b, u) => {
            const safe = (text: string) => JSON.stringify(text).slice(1, -1);
            const [method, url, body] = bodies[b]!;
            const [head, tail] = body("\u0001").split("\u0001") as [string, string];
            const payload = Buffer.concat([Buffer.from(head + safe(before)), bytes, Buffer.from(safe(after) + tail)]);
            const res = await t().call({
              method: method as Method,
              url,
              key: seed.key,
              payload,
              headers: { "content-type": "application/json" },
            });
            assert.equal(res.statusCode, 400, `${method} ${url}: ${res.body.slice(0, 300)}`);
            assert.equal(res.json().code, "invalid_encoding");
            const get = await t().call({
              method: "GET",
              url: urls[u]!(`${encodeURIComponent(before)}${percentEscaped(bytes)}`),
              key: seed.key,
            });
            assert.equal(get.statusCode, 400, get.body.slice(0, 300));
            assert.equal(get.json().code, "invalid_encoding");
          },
        ),
        { numRuns: Math.min(RUNS, 300), ...(SEED !== undefined ? { seed: SEED } : {}) },
      );
      assert.equal(await storedState(t(), seed.companyId), statesBefore, "nothing was stored");
    });

    it("refuses unpaired surrogates and keeps every other string as sent, in otherwise valid writes", {
      timeout: 30 * 60_000,
    }, async (tctx) => {
      // A company of its own: these writes may succeed. A 4xx must still store nothing.
      const other = await seedCompany(t(), "Fuzz Strings");
      const text = fc.oneof(
        oddString,
        fc.string({ unit: "binary", minLength: 1, maxLength: 30 }),
        fc.constantFrom("\ud800", "a\udc00b", "\ud83d\ude00", "x\ud83d"),
      );
      const writes = fc.oneof(
        text.map((name) => ({
          route: "POST /v1/billing/customers",
          method: "POST" as Method,
          url: "/v1/billing/customers",
          body: { name } as Record<string, unknown>,
          echo: ["name", name] as const,
        })),
        fc.tuple(text, text).map(([external_id, country]) => ({
          route: "POST /v1/billing/customers",
          method: "POST" as Method,
          url: "/v1/billing/customers",
          body: { name: "S", external_id, country },
          echo: ["external_id", external_id] as const,
        })),
        fc.tuple(text, text).map(([name, counterparty]) => ({
          route: "POST /v1/billing/contracts/:ext_id/pricing-rules",
          method: "POST" as Method,
          url: `/v1/billing/contracts/${other.contractId}/pricing-rules`,
          body: { metric: "domestic_wire", amount: "1.00", name, counterparty },
          echo: undefined,
        })),
        text.map((name) => ({
          route: "PUT /v1/billing/contracts/:ext_id/pricing-rules/:rule_id",
          method: "PUT" as Method,
          url: `/v1/billing/contracts/${other.contractId}/pricing-rules/${other.ruleId}`,
          body: { name },
          echo: undefined,
        })),
        fc.tuple(text, text).map(([eventId, pair]) => ({
          route: "POST /v1/billing/usage",
          method: "POST" as Method,
          url: "/v1/billing/usage",
          body: {
            events: [
              {
                external_contract_id: other.contractId,
                event_id: eventId,
                metric: "domestic_wire",
                quantity: 1,
                timestamp: "2026-03-20T10:00:00Z",
                pair,
              },
            ],
          },
          echo: undefined,
        })),
        text.map((description) => ({
          route: "PATCH /v1/webhook-endpoints/:id",
          method: "PATCH" as Method,
          url: `/v1/webhook-endpoints/${other.endpointId}`,
          body: { description },
          echo: ["description", description] as const,
        })),
      );
      const stats = newStats();
      const startedAt = performance.now();
      await fc.assert(
        fc.asyncProperty(writes, async (write) => {
          const stateBefore = await storedState(t(), other.companyId);
          const request = withShortString({
            route: write.route,
            method: write.method,
            url: write.url,
            headers: { authorization: `Bearer ${other.key}`, "content-type": "application/json" },
            payload: JSON.stringify(write.body),
            auth: "valid" as Auth,
            mustFail: false,
          });
          const { res } = await send(t(), request, stats);
          assertAnswer(res);
          if (res.statusCode >= 400)
            assert.equal(
              await storedState(t(), other.companyId),
              stateBefore,
              `a ${res.statusCode} changed stored data`,
            );
          if (hasLoneSurrogate(write.body) || JSON.stringify(write.body).includes("\\u0000")) {
            // PostgreSQL text is UTF-8: a lone surrogate would be stored as U+FFFD, so that two different
            // event ids or external ids became one (or, in jsonb, the insert failed).
            assert.equal(
              res.statusCode,
              400,
              `a string that cannot be stored answered ${res.statusCode}: ${res.body.slice(0, 200)}`,
            );
            assert.equal((res.json() as { code: string }).code, "invalid_request");
          } else if (res.statusCode < 300 && write.echo) {
            const [field, sent] = write.echo;
            const shown = (res.json() as Record<string, unknown>)[field];
            // text fields are trimmed; nothing else may change
            assert.equal(shown, sent.trim(), `${field} came back changed`);
          }
        }),
        { numRuns: Math.max(50, Math.round(RUNS / 5)), ...(SEED !== undefined ? { seed: SEED } : {}) },
      );
      report(tctx, "odd strings", stats, startedAt);
    });
  },
  // Garbage credentials are 8 % of the requests, all from one address: the failure throttle would
  // answer them 429 long before the run ends, and they are here to reach the 401 path (auth-throttle.test.ts
  // tests the throttle).
  { env: { BILLING_RATE_LIMIT: "off", BILLING_WEBHOOK_ALLOW_PRIVATE: "false", BILLING_AUTH_FAILURES: "off" } },
);
