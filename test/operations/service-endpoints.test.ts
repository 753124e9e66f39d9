import assert from "node:assert/strict";
import { it } from "node:test";
import { createApp } from "../../src/app.js";
import { openDatabase } from "../../src/db/open-database.js";
import { createTestDatabase, describeEachEngine, testConfig, type TestApp } from "../support/harness.js";
import { UUID_RE } from "../support/api.js";
import { expectError } from "../support/assertions.js";

/** The value of `http_requests_total` for one method, route and status (0 when absent). */
async function requestsCounted(t: TestApp, method: string, route: string, status: number): Promise<number> {
  const text = (await t.call({ method: "GET", url: "/metrics" })).body;
  for (const line of text.split("\n")) {
    if (!line.startsWith("http_requests_total{")) continue;
    const labels = line.slice(line.indexOf("{") + 1, line.lastIndexOf("}"));
    if (labels.includes(`method="${method}"`) && labels.includes(`route="${route}"`) && labels.includes(`status="${status}"`)) {
      return Number(line.slice(line.lastIndexOf("}") + 1).trim());
    }
  }
  return 0;
}

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
    const database = await createTestDatabase(engine);
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
    for (const field of ["name", "external_id", "email", "domain", "country", "address", "registration_number", "payment_terms_days"]) {
      assert.ok(bodySchema.properties[field], `request field ${field} is documented`);
    }
    assert.ok(customers.post.responses["201"], "the 201 answer is documented");
    assert.ok(customers.post.responses["409"], "the 409 answer is documented");
    const params = customers.get.parameters.map((p: { name: string; in: string }) => `${p.in}:${p.name}`).sort();
    assert.deepEqual(params, ["query:external_id", "query:limit", "query:starting_after"]);

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
    for (const status of ["201", "400", "404", "409", "413", "415"]) assert.ok(upload.responses[status], `upload answers ${status}`);
    assert.ok(upload.responses["409"].content["application/json"].schema.properties.contract, "409 carries the existing contract");
    const pdf = (path: string) => doc.paths[path].get.responses["200"].content["application/pdf"].schema;
    assert.deepEqual(pdf("/v1/billing/invoices/{number}/pdf"), { type: "string", format: "binary" });
    assert.deepEqual(pdf("/v1/billing/contracts/{ext_id}/agreement.pdf"), { type: "string", format: "binary" });
    const csv = doc.paths["/v1/billing/invoices/{number}/usage.csv"].get.responses["200"];
    assert.ok(csv.content["text/csv"]);
    assert.ok(csv.headers["Content-Digest"]);
    for (const action of ["finalize", "pay", "void"]) assert.ok(doc.paths[`/v1/billing/invoices/{number}/${action}`].post.responses["409"], `${action} documents its 409`);
  });

  it("leaves the admin and operational paths out of the public OpenAPI document", async () => {
    const doc = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
    for (const path of Object.keys(doc.paths)) {
      assert.ok(!path.startsWith("/admin"), `${path} is not public`);
      assert.ok(!["/healthz", "/readyz", "/metrics", "/v1/openapi.json"].includes(path), `${path} is not an API endpoint`);
    }
  });

  it("answers 404 Not found in the error shape for unknown paths and methods, with or without a key", async () => {
    const { key } = await t().newCompany();
    for (const request of [
      { method: "GET" as const, url: "/nope" },
      { method: "GET" as const, url: "/v1/billing/nothing-here" },
      { method: "POST" as const, url: "/v1/billing/nothing-here", payload: { a: 1 } },
      { method: "DELETE" as const, url: "/v1/billing/customers" },
      { method: "GET" as const, url: "/v2/billing/customers" },
    ]) {
      for (const withKey of [false, true]) {
        const res = await t().call({ ...request, ...(withKey ? { key } : {}) });
        const body = expectError(res, 404, "not_found");
        assert.equal(body.error, "Not found", `${request.method} ${request.url}`);
      }
    }
  });

  it("answers 400 in the error shape to a URL that is not valid percent-encoding", async () => {
    for (const url of ["/%ff", "/v1/billing/%zz"]) {
      const res = await t().call({ method: "GET", url });
      expectError(res, 400, "invalid_request");
    }
  });

  it("echoes a sane incoming x-request-id in the request-id response header", async () => {
    const res = await t().call({ method: "GET", url: "/healthz", headers: { "x-request-id": "req-42_abc.DEF" } });
    assert.equal(res.headers["request-id"], "req-42_abc.DEF");
  });

  it("echoes the x-request-id on error answers too", async () => {
    const res = await t().call({ method: "GET", url: "/v1/billing/customers", headers: { "x-request-id": "trace-401" } });
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
