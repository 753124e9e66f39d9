import assert from "node:assert/strict";
import { it } from "node:test";
import { createApp } from "../../src/app.js";
import { openDatabase } from "../../src/db/open-database.js";
import { createMigratedTestDatabase, describeEachEngine, testConfig, type TestApp } from "../support/harness.js";
import { UUID_RE } from "../support/api.js";
import { expectError } from "../support/assertions.js";

/** The value of `http_requests_total` for one method, route and status (0 when absent). */
async function requestsCounted(t: TestApp, method: string, route: string, status: number): Promise<number> {
  const text = (await t.call({ method: "GET", url: "/metrics" })).body;
  for (const line of text.split("\n")) {
    if (!line.startsWith("http_requests_total{")) continue;
    const labels = line.slice(line.indexOf("{") + 1, line.lastIndexOf("}"));
    if (
      labels.includes(`method="${method}"`) &&
      labels.includes(`route="${route}"`) &&
      labels.includes(`status="${status}"`)
    ) {
      return Number(line.slice(line.lastIndexOf("}") + 1).trim());
    }
  }
  return 0;
}

type Json = Record<string, any>; // the served document, read as JSON

/** What a `$ref` (`#/components/...`) points at in the document; any other value as it is. */
function resolve(doc: Json, node: Json): Json {
  if (typeof node?.$ref !== "string") return node;
  const target = (node.$ref as string)
    .replace(/^#\//, "")
    .split("/")
    .reduce((at: Json | undefined, key) => at?.[key], doc);
  assert.ok(target, `${node.$ref} resolves`);
  return resolve(doc, target!);
}

/**
 * An error answer's schema as one object: the properties and required fields of what it is `allOf` (the
 * shared Error, or an error that carries the resource it names) with its own (`code`'s enum).
 */
function errorSchema(doc: Json, node: Json): { properties: Json; required: string[] } {
  const schema = resolve(doc, node);
  const parts = [...(schema.allOf ?? []).map((part: Json) => resolve(doc, part)), schema];
  return {
    properties: Object.assign({}, ...parts.map((part: Json) => part.properties ?? {})),
    required: [...new Set(parts.flatMap((part: Json) => part.required ?? []))] as string[],
  };
}

/** Every operation of the document: its paths' and its webhooks'. */
function operationsOf(doc: Json): { where: string; path: string; method: string; operation: Json }[] {
  return (["paths", "webhooks"] as const).flatMap((section) =>
    Object.entries<Json>(doc[section] ?? {}).flatMap(([path, item]) =>
      Object.entries<Json>(item).map(([method, operation]) => ({
        where: `${method.toUpperCase()} ${path}`,
        path,
        method,
        operation,
      })),
    ),
  );
}

/** The API description's names for these operations. */
const FIXED_OPERATION_IDS: Record<string, string> = {
  "POST /v1/billing/usage": "submitUsage",
  "GET /v1/billing/usage": "listUsageEvents",
  "GET /v1/billing/usage/{event_id}": "getUsageEvent",
  "GET /v1/billing/contracts": "listContracts",
  "GET /v1/billing/contracts/{ext_id}": "getContract",
  "GET /v1/billing/contracts/{ext_id}/pricing": "getContractPricing",
  "POST /v1/billing/contracts/{ext_id}/pricing-rules": "addPricingRule",
  "PUT /v1/billing/contracts/{ext_id}/pricing-rules/{rule_id}": "updatePricingRule",
};

describeEachEngine("service endpoints", (t, engine) => {
  it("answers 200 on /healthz without an API key", async () => {
    const res = await t().call({ method: "GET", url: "/healthz" });
    assert.equal(res.statusCode, 200);
  });

  it("answers 200 on /readyz while the database answers", async () => {
    const res = await t().call({ method: "GET", url: "/readyz" });
    assert.equal(res.statusCode, 200);
  });

  it("answers 503 on /readyz once the database stops answering, while /healthz still answers 200", async () => {
    const database = await createMigratedTestDatabase(engine);
    // On PostgreSQL the app gets a pool of its own, so that closing it leaves the harness able to drop the database.
    const db = engine === "postgres" ? await openDatabase(database.storage) : database.db;
    const app = await createApp(testConfig(), { db });
    try {
      assert.equal((await app.http.inject({ method: "GET", url: "/readyz" })).statusCode, 200);
      await db.close();
      const res = await app.http.inject({ method: "GET", url: "/readyz" });
      assert.equal(res.statusCode, 503);
      assert.equal((await app.http.inject({ method: "GET", url: "/healthz" })).statusCode, 200);
    } finally {
      await app.close();
      if (engine === "postgres") await database.drop();
    }
  });

  it("serves Prometheus text on /metrics that counts answered requests by route and status", async () => {
    const res = await t().call({ method: "GET", url: "/metrics" });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers["content-type"]), /^text\/plain/);
    assert.match(res.body, /^# HELP http_requests_total /m);
    assert.match(res.body, /^# TYPE http_requests_total counter$/m);

    const before = await requestsCounted(t(), "GET", "/healthz", 200);
    for (let i = 0; i < 3; i++) await t().call({ method: "GET", url: "/healthz" });
    await t().call({ method: "GET", url: "/v1/billing/customers" }); // a 401, counted under its route
    assert.equal(await requestsCounted(t(), "GET", "/healthz", 200), before + 3);
    assert.ok((await requestsCounted(t(), "GET", "/v1/billing/customers", 401)) >= 1);
  });

  it("serves an OpenAPI 3.1 document without an API key that describes the customer endpoints", async () => {
    const res = await t().call({ method: "GET", url: "/v1/openapi.json" });
    assert.equal(res.statusCode, 200);
    assert.match(String(res.headers["content-type"]), /^application\/json/);
    const doc = res.json();
    assert.equal(doc.openapi, "3.1.0");
    assert.equal(typeof doc.info.title, "string");
    const customers = doc.paths["/v1/billing/customers"];
    assert.ok(customers, "the customers path is documented");
    assert.ok(customers.post, "POST /v1/billing/customers is documented");
    assert.ok(customers.get, "GET /v1/billing/customers is documented");

    const bodySchema = customers.post.requestBody.content["application/json"].schema;
    assert.deepEqual(bodySchema.required, ["name"]);
    for (const field of [
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
    ]) {
      assert.ok(bodySchema.properties[field], `request field ${field} is documented`);
    }
    assert.ok(customers.post.responses["201"], "the 201 answer is documented");
    assert.ok(customers.post.responses["409"], "the 409 answer is documented");
    const params = customers.get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort();
    assert.deepEqual(params, ["query:external_id", "query:limit", "query:search", "query:starting_after"]);
    const one = doc.paths["/v1/billing/customers/{id}"];
    assert.ok(one?.get && one.patch, "GET and PATCH /v1/billing/customers/{id} are documented");

    const schemes = Object.values(doc.components.securitySchemes) as { type: string; scheme?: string; name?: string }[];
    assert.ok(schemes.some((s) => s.type === "http" && s.scheme === "bearer"));
    assert.ok(schemes.some((s) => s.type === "apiKey" && s.name === "X-Api-Key"));
  });

  it("describes the operations that carry files: the upload's multipart body and the PDF and CSV answers", async () => {
    const doc = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
    const upload = doc.paths["/v1/billing/contracts/upload"].post;
    const form = upload.requestBody.content["multipart/form-data"];
    assert.deepEqual(form.schema.required, ["file", "terms"]);
    assert.equal(form.schema.properties.file.format, "binary");
    const terms = form.schema.properties.terms.contentSchema;
    assert.deepEqual([...terms.required].sort(), ["contract_id", "currency", "customer", "rules", "start_date"]);
    assert.ok(terms.properties.rules.items.properties.amount, "a rule's fields are described");
    for (const status of ["201", "400", "404", "409", "413", "415"])
      assert.ok(upload.responses[status], `upload answers ${status}`);
    assert.ok(terms.properties.customer.properties.address, "a new customer's address, as an extraction proposes it");
    const extract = doc.paths["/v1/billing/contracts/extract"].post;
    const extractForm = extract.requestBody.content["multipart/form-data"];
    assert.deepEqual(extractForm.schema.required, ["file"]);
    assert.deepEqual(Object.keys(extractForm.schema.properties), ["file"]);
    assert.equal(extractForm.schema.properties.file.format, "binary");
    assert.deepEqual(extract.responses["200"].content["application/json"].schema, {
      $ref: "#/components/schemas/ContractExtraction",
    });
    for (const status of ["400", "413", "415", "429"])
      assert.ok(extract.responses[status], `extract answers ${status}`);
    const conflicts = resolve(doc, upload.responses["409"].content["application/json"].schema).allOf[0].anyOf.map(
      (s: Json) => resolve(doc, s),
    );
    assert.ok(
      conflicts.some((c: Json) => c.properties.contract && c.required.includes("contract")),
      "409 carries the existing contract",
    );
    assert.ok(
      conflicts.some((c: Json) => c.properties.customer && c.required.includes("customer")),
      "or the existing customer",
    );
    const pdf = (path: string) => doc.paths[path].get.responses["200"].content["application/pdf"].schema;
    assert.deepEqual(pdf("/v1/billing/invoices/{number}/pdf"), { type: "string", format: "binary" });
    assert.deepEqual(pdf("/v1/billing/contracts/{ext_id}/agreement.pdf"), { type: "string", format: "binary" });
    const csv = doc.paths["/v1/billing/invoices/{number}/usage.csv"].get.responses["200"];
    assert.ok(csv.content["text/csv"]);
    assert.ok(csv.headers["Content-Digest"]);
    for (const action of ["finalize", "pay", "void"])
      assert.ok(
        doc.paths[`/v1/billing/invoices/{number}/${action}`].post.responses["409"],
        `${action} documents its 409`,
      );
  });

  it("names every operation with a unique camelCase operationId, the API description's names where it gives them", async () => {
    const doc = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
    const operations = operationsOf(doc);
    assert.ok(operations.length >= 30);
    const seen = new Map<string, string>();
    for (const { where, operation } of operations) {
      assert.match(String(operation.operationId), /^[a-z]+[A-Z][A-Za-z]*$/, `${where} has a verbNoun operationId`);
      assert.equal(
        seen.get(operation.operationId),
        undefined,
        `${where}: ${operation.operationId} is also ${seen.get(operation.operationId)}`,
      );
      seen.set(operation.operationId, where);
    }
    for (const [where, operationId] of Object.entries(FIXED_OPERATION_IDS))
      assert.equal(seen.get(operationId), where, `${operationId} is ${where}`);
    for (const [where, operationId] of Object.entries({
      "POST /v1/billing/customers": "createCustomer",
      "POST /v1/billing/contracts/upload": "uploadContract",
      "GET /v1/billing/invoices/{number}": "getInvoice",
      "POST /v1/webhook-endpoints": "createWebhookEndpoint",
      "GET /v1/webhook-endpoints": "listWebhookEndpoints",
    })) {
      assert.equal(seen.get(operationId), where, `${operationId} is ${where}`);
    }
  });

  it("names the resources in components.schemas, and the operations refer to them with $ref", async () => {
    const doc = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
    const schemas = doc.components.schemas;
    for (const name of [
      "Contract",
      "Customer",
      "Invoice",
      "InvoiceLineItem",
      "InvoiceSummary",
      "UsageEvent",
      "PricingRule",
      "PricingProgram",
      "WebhookEndpoint",
      "Error",
      "CustomerList",
      "ContractList",
      "InvoiceList",
      "UsageEventList",
    ]) {
      assert.equal(schemas[name]?.type, "object", `${name} is a named schema`);
    }
    const ok = (path: string, method = "get", status = "200") =>
      doc.paths[path][method].responses[status].content["application/json"].schema;
    assert.deepEqual(ok("/v1/billing/contracts/{ext_id}"), { $ref: "#/components/schemas/Contract" });
    assert.deepEqual(ok("/v1/billing/customers", "post", "201"), { $ref: "#/components/schemas/Customer" });
    assert.deepEqual(ok("/v1/billing/invoices/{number}"), { $ref: "#/components/schemas/Invoice" });
    assert.deepEqual(ok("/v1/billing/usage/{event_id}"), { $ref: "#/components/schemas/UsageEvent" });
    assert.deepEqual(ok("/v1/billing/contracts/{ext_id}/pricing"), { $ref: "#/components/schemas/PricingProgram" });
    assert.deepEqual(ok("/v1/webhook-endpoints/{id}"), { $ref: "#/components/schemas/WebhookEndpoint" });
    assert.deepEqual(ok("/v1/billing/customers"), { $ref: "#/components/schemas/CustomerList" });
    assert.deepEqual(schemas.CustomerList.properties.data.items, { $ref: "#/components/schemas/Customer" });
    assert.deepEqual(schemas.Invoice.properties.line_items.items, { $ref: "#/components/schemas/InvoiceLineItem" });
    assert.deepEqual(schemas.PricingProgram.properties.rules.items, { $ref: "#/components/schemas/PricingRule" });
    assert.deepEqual(schemas.Error.required, ["error", "code"]);

    // Every reference resolves, and every named schema is used.
    const refs = new Set<string>();
    const visit = (node: unknown): void => {
      if (Array.isArray(node)) {
        for (const item of node) visit(item);
        return;
      }
      if (node === null || typeof node !== "object") return;
      for (const [key, value] of Object.entries(node)) key === "$ref" ? refs.add(String(value)) : visit(value);
    };
    visit(doc);
    for (const ref of refs) resolve(doc, { $ref: ref });
    for (const name of Object.keys(schemas)) assert.ok(refs.has(`#/components/schemas/${name}`), `${name} is used`);
  });

  it("documents on every operation 400, 401, 403, 429 and 500, and 413 and 415 where it reads a body, each with its codes", async () => {
    const doc = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
    const codesOf = (response: Json) => [...String(response.description).matchAll(/^- `([a-z_]+)`/gm)].map((m) => m[1]);
    for (const { where, path, method, operation } of operationsOf(doc)) {
      if (!path.startsWith("/v1/")) continue; // the webhooks: answered by the receiver
      const responses: Json = Object.fromEntries(
        Object.entries<Json>(operation.responses).map(([status, r]) => [status, resolve(doc, r)]),
      );
      const statuses = [
        "400",
        "401",
        "403",
        "429",
        "500",
        ...(operation.requestBody || method !== "get" ? ["413", "415"] : []),
      ];
      for (const status of statuses) {
        assert.ok(responses[status], `${where} documents ${status}`);
        const schema = errorSchema(doc, responses[status].content["application/json"].schema);
        assert.deepEqual(
          [schema.properties.error.type, schema.properties.code.type],
          ["string", "string"],
          `${where} ${status} is an Error`,
        );
        assert.deepEqual(
          schema.properties.code.enum,
          codesOf(responses[status]),
          `${where} ${status}: its code is an enum of the codes it lists`,
        );
      }
      assert.deepEqual(codesOf(responses["401"]), ["missing_api_key", "invalid_api_key"], where);
      assert.deepEqual(codesOf(responses["403"]), ["insufficient_scope"], where);
      const readsAgreement = ["POST /v1/billing/contracts/upload", "POST /v1/billing/contracts/extract"];
      // The operations that make a document in the document processes (docs/architecture.md, "Documents off the main thread").
      const makesDocument = [
        "GET /v1/billing/invoices/{number}/pdf",
        "GET /v1/billing/credit-notes/{number}/pdf",
        "GET /v1/billing/contracts/{ext_id}/agreement.pdf",
        "PUT /v1/billing/account/logo",
      ];
      const ownLimits = [
        ...(readsAgreement.includes(where) ? ["too_many_uploads"] : []),
        // The extraction reads the terms in the document processes too.
        ...(makesDocument.includes(where) || where === "POST /v1/billing/contracts/extract"
          ? ["too_many_documents"]
          : []),
        ...(where === "POST /v1/billing/contracts/{ext_id}/pricing/preview" ? ["too_many_previews"] : []),
      ];
      assert.deepEqual(codesOf(responses["429"]), ["rate_limited", "too_many_failed_attempts", ...ownLimits], where);
      assert.ok(responses["429"].headers["Retry-After"], `${where}: 429 says Retry-After`);
      assert.ok(codesOf(responses["400"]).includes("invalid_request"), where);
      if (operation.requestBody?.content["application/json"]) {
        assert.ok(codesOf(responses["400"]).includes("invalid_json"), where);
        assert.deepEqual(codesOf(responses["413"]), ["payload_too_large"], where);
        assert.deepEqual(codesOf(responses["415"]), ["unsupported_media_type"], where);
      }
      for (const [status, response] of Object.entries(responses)) {
        if (Number(status) >= 400) assert.ok(codesOf(response).length > 0, `${where} ${status} lists its codes`);
      }
    }
    const responses = (path: string, method: string) => doc.paths[path][method].responses;
    assert.deepEqual(codesOf(responses("/v1/billing/customers", "post")["409"]), ["customer_exists"]);
    const exists = errorSchema(
      doc,
      responses("/v1/billing/customers", "post")["409"].content["application/json"].schema,
    );
    assert.deepEqual(exists.properties.customer, {
      $ref: "#/components/schemas/Customer",
      description: "The customer that has this external_id",
    });
    assert.ok(exists.required.includes("customer"), "a 409 always carries the customer");
    assert.ok(
      codesOf(responses("/v1/billing/contracts/{ext_id}/pricing-rules", "post")["400"]).includes(
        "invalid_pricing_rule",
      ),
    );
    assert.deepEqual(codesOf(responses("/v1/billing/contracts/{ext_id}/pricing-rules", "post")["409"]), [
      "rule_exists",
      "period_closed",
    ]);
    assert.deepEqual(codesOf(responses("/v1/billing/contracts/upload", "post")["415"]), [
      "unsupported_media_type",
      "file_not_pdf",
    ]);
    assert.ok(codesOf(responses("/v1/billing/contracts/upload", "post")["413"]).includes("file_too_large"));
    assert.deepEqual(codesOf(responses("/v1/billing/contracts/{ext_id}", "get")["404"]), ["not_found"]);
    assert.ok(codesOf(responses("/v1/billing/customers", "get")["400"]).includes("invalid_cursor"));
    assert.equal(responses("/v1/billing/customers", "get")["404"], undefined, "a list answers no 404");
  });

  it("states the request bodies' required fields and the formats of emails, URLs, dates and timestamps", async () => {
    const doc = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
    const schemas = doc.components.schemas;
    const body = (path: string, method = "post") => doc.paths[path][method].requestBody;
    const prop = (schema: Json, name: string) => {
      const p = schema.properties[name];
      return p.anyOf ? p.anyOf.find((s: Json) => s.type !== "null") : p;
    };
    assert.equal(prop(schemas.Customer, "email").format, "email");
    assert.equal(prop(schemas.Customer, "created_at").format, "date-time");
    assert.equal(prop(schemas.Contract, "start_date").format, "date");
    assert.equal(prop(schemas.Contract, "end_date").format, "date");
    assert.equal(prop(schemas.Contract, "pdf_url").format, "uri");
    assert.equal(prop(schemas.InvoiceSummary, "due_date").format, "date");
    assert.equal(prop(schemas.BillingPeriod, "start").format, "date");
    assert.equal(prop(schemas.UsageEvent, "timestamp").format, "date-time");
    assert.equal(prop(schemas.WebhookEndpoint, "url").format, "uri");
    assert.equal(prop(schemas.WebhookDelivery, "delivered_at").format, "date-time");

    const customer = body("/v1/billing/customers").content["application/json"].schema;
    assert.equal(customer.properties.email.format, "email");
    const endpoint = body("/v1/webhook-endpoints").content["application/json"].schema;
    assert.deepEqual(endpoint.required, ["url"]);
    assert.equal(endpoint.properties.url.format, "uri");
    const projection = body("/v1/billing/invoices/project").content["application/json"].schema;
    assert.deepEqual(projection.required, ["external_contract_id", "billing_period_start", "billing_period_end"]);
    assert.equal(projection.properties.billing_period_start.format, "date");
    const pay = body("/v1/billing/invoices/{number}/pay");
    assert.equal(pay.required, false, "payInvoice may be sent without a body");
    assert.equal(pay.content["application/json"].schema.properties.paid_date.format, "date");
    assert.equal(body("/v1/billing/customers").required, true);
    const usage = body("/v1/billing/usage").content["application/json"].schema;
    assert.deepEqual(usage.required, ["events"]);
    assert.equal(usage.properties.events.items.properties.timestamp.format, "date-time");

    // A rule's type is required unless a metric makes it a usage rule: the server takes { metric, rate } as a
    // complete rule (docs/api.md), so the schema requires no field and the description says what each type needs.
    const rule = body("/v1/billing/contracts/{ext_id}/pricing-rules");
    assert.equal(rule.content["application/json"].schema.required, undefined);
    assert.match(rule.description, /`type` is required unless `metric` is given/);
    assert.match(rule.description, /`usage` needs `metric`, and `amount` .* or `rate`/);
    assert.match(rule.description, /`subscription`, `minimum` and `one_time` need `amount`/);
    assert.deepEqual(rule.content["application/json"].schema.properties.type.enum, [
      "usage",
      "subscription",
      "minimum",
      "one_time",
    ]);
  });

  it("describes the webhooks it sends, customer.created, contract.created and the invoice events, with their envelope and signature headers", async () => {
    const doc = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
    assert.deepEqual(Object.keys(doc.webhooks).sort(), [
      "contract.created",
      "credit_note.created",
      "customer.created",
      "invoice.issued",
      "invoice.paid",
      "invoice.payment_recorded",
      "invoice.voided",
    ]);
    for (const [type, resource] of [
      ["customer.created", "Customer"],
      ["contract.created", "Contract"],
      ["invoice.issued", "Invoice"],
      ["invoice.paid", "Invoice"],
      ["invoice.voided", "Invoice"],
      ["invoice.payment_recorded", "InvoicePayment"],
      ["credit_note.created", "CreditNote"],
    ] as const) {
      const post = doc.webhooks[type].post;
      assert.deepEqual(post.security, [], `${type} is signed, not sent with an API key`);
      const event = resolve(doc, post.requestBody.content["application/json"].schema);
      assert.deepEqual([...event.required].sort(), ["created_at", "data", "id", "object", "test", "type"]);
      assert.equal(event.properties.type.const, type);
      assert.equal(event.properties.object.const, "event");
      assert.equal(event.properties.data.properties.object.$ref, `#/components/schemas/${resource}`);
      const headers = post.parameters.filter((p: Json) => p.in === "header").map((p: Json) => p.name);
      for (const name of [
        "Service-Signature",
        "Service-Event-Id",
        "Service-Event-Type",
        "Webhook-Id",
        "Webhook-Timestamp",
        "Webhook-Signature",
      ]) {
        assert.ok(headers.includes(name), `${type} documents ${name}`);
      }
      assert.ok(post.responses["2XX"]);
    }
  });

  it("leaves the admin and operational paths out of the public OpenAPI document", async () => {
    const doc = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
    for (const path of Object.keys(doc.paths)) {
      assert.ok(!path.startsWith("/admin"), `${path} is not public`);
      assert.ok(
        !["/healthz", "/readyz", "/metrics", "/v1/openapi.json"].includes(path),
        `${path} is not an API endpoint`,
      );
    }
  });

  it("answers 404 Not found in the error shape for unknown paths, and 405 with Allow for a method a known path does not take, with or without a key", async () => {
    const { key } = await t().newCompany();
    for (const withKey of [false, true]) {
      const res = await t().call({ method: "DELETE", url: "/v1/billing/customers", ...(withKey ? { key } : {}) });
      expectError(res, 405, "method_not_allowed");
      assert.equal(res.headers.allow, "GET, HEAD, POST");
    }
    for (const request of [
      { method: "GET" as const, url: "/nope" },
      { method: "GET" as const, url: "/v1/billing/nothing-here" },
      { method: "POST" as const, url: "/v1/billing/nothing-here", payload: { a: 1 } },
      { method: "GET" as const, url: "/v2/billing/customers" },
    ]) {
      for (const withKey of [false, true]) {
        const res = await t().call({ ...request, ...(withKey ? { key } : {}) });
        const body = expectError(res, 404, "not_found");
        assert.equal(body.error, "Not found", `${request.method} ${request.url}`);
      }
    }
  });

  it("answers 400 in the error shape to a URL that is not valid percent-encoding, or whose escapes are not UTF-8", async () => {
    expectError(await t().call({ method: "GET", url: "/v1/billing/%zz" }), 400, "invalid_request");
    expectError(await t().call({ method: "GET", url: "/%ff" }), 400, "invalid_encoding");
  });

  it("echoes a sane incoming x-request-id in the request-id response header", async () => {
    const res = await t().call({ method: "GET", url: "/healthz", headers: { "x-request-id": "req-42_abc.DEF" } });
    assert.equal(res.headers["request-id"], "req-42_abc.DEF");
  });

  it("echoes the x-request-id on error answers too", async () => {
    const res = await t().call({
      method: "GET",
      url: "/v1/billing/customers",
      headers: { "x-request-id": "trace-401" },
    });
    assert.equal(res.statusCode, 401);
    assert.equal(res.headers["request-id"], "trace-401");
    const missing = await t().call({ method: "GET", url: "/missing", headers: { "x-request-id": "trace-404" } });
    assert.equal(missing.headers["request-id"], "trace-404");
  });

  it("assigns a fresh UUID request-id when none is given, different for every request", async () => {
    const a = await t().call({ method: "GET", url: "/healthz" });
    const b = await t().call({ method: "GET", url: "/healthz" });
    assert.match(String(a.headers["request-id"]), UUID_RE);
    assert.match(String(b.headers["request-id"]), UUID_RE);
    assert.notEqual(a.headers["request-id"], b.headers["request-id"]);
  });

  it("replaces an incoming x-request-id that is too long or holds unsafe characters", async () => {
    for (const given of ["x".repeat(129), "has spaces in it", "new\u00e9line", "<script>", "a;b"]) {
      const res = await t().call({ method: "GET", url: "/healthz", headers: { "x-request-id": given } });
      const answered = String(res.headers["request-id"]);
      assert.notEqual(answered, given);
      assert.match(answered, UUID_RE);
    }
  });

  it("marks answers as not to be cached or sniffed", async () => {
    const { key } = await t().newCompany();
    const res = await t().call({ method: "GET", url: "/v1/billing/customers", key });
    assert.equal(res.headers["x-content-type-options"], "nosniff");
    assert.equal(res.headers["cache-control"], "no-store");
  });
});
