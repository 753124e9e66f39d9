/**
 * The OpenAPI document tells the truth (docs/api.md, "The OpenAPI document"): every operation of the document
 * as served is called with valid and invalid requests, on both engines, and every answer is held to the
 * document: its status is one the operation documents; its body validates against the schema documented for
 * that status and content type (Ajv, JSON Schema 2020-12, formats checked), or, for a PDF or CSV, is of the
 * documented type and not empty; the required response headers are there and valid; an error's `code` is one
 * its response lists. Requests are held to it too: one that succeeds is one the document describes, and one
 * refused as `invalid_request` is one it does not. What reaches a webhook endpoint is checked against the
 * document's `webhooks`. Every operation answers at least one 2xx and one 4xx; in a rate-limited app, every
 * operation answers 429 with its Retry-After.
 */
import assert from "node:assert/strict";
import { before, it } from "node:test";
import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";
import formatsPlugin from "ajv-formats";
import type { InjectOptions, LightMyRequestResponse } from "fastify";
import { MARCH, createCustomer, setContractStatus, usageEvent } from "../support/api.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { JPEG_16, pngImage } from "../support/images.js";
import { generatedAgreement, multipart, plainPdf, uploadTerms, type MultipartPart } from "../support/uploads.js";
import { receiverPool, type ReceivedRequest } from "../support/webhook-receiver.js";

// ajv-formats is CommonJS: its plugin is the module's default export.
const addFormats = formatsPlugin as unknown as typeof formatsPlugin.default;

type Json = Record<string, any>; // the served document, read as JSON

/** Where each named schema of `components.schemas` is added to Ajv; `#/components/schemas/X` refs are rewritten to it. */
const SCHEMAS = "https://billing.test/openapi.json/components/schemas/";

/** A request to one operation: path parameters, query, and a JSON payload or a raw body with its content-type. */
interface Call {
  params?: Record<string, string>;
  query?: Record<string, string>;
  /** Appended to the URL as it is, escapes and all (after `query`, if any). */
  rawQuery?: string;
  payload?: unknown;
  body?: string | Buffer;
  headers?: Record<string, string>;
  /** The API key; `null` sends none; left out, the suite's full-access key. */
  key?: string | null;
}

interface Operation {
  id: string;
  method: string;
  path: string;
  operation: Json;
}

const isJson = (mediaType: string) => mediaType === "application/json" || mediaType.endsWith("+json");

/** The served document as a checker of answers and requests, and the record of the (operationId, status) pairs answered. */
class DocumentChecker {
  readonly operations = new Map<string, Operation>();
  readonly answered = new Map<string, Set<number>>();
  private readonly ajv = new Ajv2020({ strict: true, allErrors: true, allowUnionTypes: true });
  private readonly validators = new Map<string, ValidateFunction>();

  constructor(private readonly doc: Json) {
    addFormats(this.ajv);
    // The document's exact decimals: a JSON number (its digits are held to the stored ones elsewhere, test/kernel).
    this.ajv.addFormat("decimal", { type: "number", validate: () => true });
    for (const [name, schema] of Object.entries<Json>(doc.components?.schemas ?? {})) {
      this.ajv.addSchema({ ...rewriteRefs(schema), $id: `${SCHEMAS}${name}` });
    }
    for (const [path, item] of Object.entries<Json>(doc.paths)) {
      for (const [method, operation] of Object.entries<Json>(item)) {
        assert.equal(typeof operation.operationId, "string", `${method.toUpperCase()} ${path} has an operationId`);
        this.operations.set(operation.operationId, {
          id: operation.operationId,
          method: method.toUpperCase(),
          path,
          operation,
        });
      }
    }
  }

  operation(id: string): Operation {
    const found = this.operations.get(id);
    assert.ok(found, `the document has an operation ${id}`);
    return found;
  }

  /** The request for `call` to operation `id`, as fastify.inject takes it. */
  request(id: string, call: Call, defaultKey: string): InjectOptions & { key?: string } {
    const { method, path } = this.operation(id);
    const url = path.replace(/\{([^}]+)\}/g, (_, name: string) => {
      const value = call.params?.[name];
      assert.ok(value !== undefined, `${id}: a value for {${name}}`);
      return encodeURIComponent(value);
    });
    const query = [call.query ? `${new URLSearchParams(call.query)}` : "", call.rawQuery ?? ""]
      .filter(Boolean)
      .join("&");
    const key = call.key === undefined ? defaultKey : call.key;
    return {
      method: method as InjectOptions["method"],
      url: query ? `${url}?${query}` : url,
      ...(key === null ? {} : { key }),
      ...(call.payload !== undefined ? { payload: call.payload as InjectOptions["payload"] } : {}),
      ...(call.body !== undefined ? { payload: call.body } : {}),
      ...(call.headers ? { headers: call.headers } : {}),
    };
  }

  /**
   * Checks an answer of operation `id` to `call` against the document, and records its status. The request
   * is held to the document too: one it describes (parameters, JSON body) must not be refused as
   * `invalid_request`, and one that succeeded must be one it describes.
   */
  check(id: string, call: Call, res: LightMyRequestResponse): void {
    const { method, path, operation } = this.operation(id);
    const where = `${id} (${method} ${path}) answered ${res.statusCode}`;
    const status = String(res.statusCode);
    if (res.statusCode < 300 && id === "submitUsage") {
      // Events are judged one by one (docs/decisions.md, "Rating" 7): the document shows what an accepted event
      // is, and an event it does not describe is answered in the 200, rejected as `invalid_event`.
      const events = (call.payload as { events: unknown[] }).events;
      assert.deepEqual(
        this.requestProblems(id, {
          ...call,
          payload: { ...(call.payload as object), events: events.map(() => ({})) },
        }).filter((p) => !p.startsWith("body/events/")),
        [],
        `${where}: the envelope`,
      );
      const answers = (JSON.parse(res.body) as { events: { status: string; error?: { code: string } }[] }).events;
      events.forEach((event, i) => {
        if (this.requestProblems(id, { ...call, payload: { events: [event] } }).length > 0) {
          assert.equal(
            answers[i]?.error?.code,
            "invalid_event",
            `${where}: event ${i}, which the document does not describe, is rejected as invalid_event`,
          );
        }
      });
    } else if (res.statusCode < 300) {
      const problems = this.requestProblems(id, call);
      assert.deepEqual(problems, [], `${where} to a request the document does not describe`);
    } else if (res.statusCode === 400 && call.body === undefined && JSON.parse(res.body).code === "invalid_request") {
      assert.notDeepEqual(
        this.requestProblems(id, call),
        [],
        `${where} invalid_request to a request the document describes: ${res.body}`,
      );
    }
    const documented =
      operation.responses?.[status] ?? operation.responses?.[`${status[0]}XX`] ?? operation.responses?.default;
    assert.ok(
      documented,
      `${where}, which it does not document (${Object.keys(operation.responses ?? {}).join(", ")}): ${res.body.slice(0, 500)}`,
    );
    const response = this.resolve(documented);

    const content = response.content as Json | undefined;
    if (!content) {
      assert.equal(res.rawPayload.length, 0, `${where}: the document gives no body, yet one came`);
    } else {
      const mediaType = String(res.headers["content-type"] ?? "")
        .split(";")[0]!
        .trim()
        .toLowerCase();
      assert.ok(
        content[mediaType],
        `${where} as ${mediaType || "no content-type"}; documented: ${Object.keys(content).join(", ")}`,
      );
      if (isJson(mediaType)) {
        // Exact decimals come as JSON numbers with more digits than a double holds: JSON.parse reads each as
        // the nearest double, which is still a number, the type the schema speaks of.
        let body: unknown;
        assert.doesNotThrow(() => (body = JSON.parse(res.body)), `${where}: the body is JSON`);
        const validate = this.validator(`${id} ${status} ${mediaType}`, content[mediaType].schema ?? {});
        assert.ok(
          validate(body),
          `${where}: the body does not match the documented schema: ${this.ajv.errorsText(validate.errors, { separator: "; " })}\n${res.body.slice(0, 2000)}`,
        );
        if (res.statusCode >= 400) {
          const code = (body as { code?: unknown }).code;
          const codes = [...String(response.description).matchAll(/^- `([a-z0-9_]+)`/gm)].map((m) => m[1]);
          assert.ok(
            codes.includes(code as string),
            `${where} with code ${String(code)}, which its description does not list (${codes.join(", ")})`,
          );
          // Ajv held the code to the schema's enum above; the enum is the list the description gives.
          const enumerated = (content[mediaType].schema as Json)?.properties?.code?.enum as string[] | undefined;
          assert.deepEqual(
            [...(enumerated ?? [])].sort(),
            [...codes].sort(),
            `${where}: the code enum is not the described codes`,
          );
        }
      } else {
        assert.ok(res.rawPayload.length > 0, `${where}: a ${mediaType} body, empty`);
      }
    }

    for (const [name, header] of Object.entries<Json>(response.headers ?? {})) {
      const definition = this.resolve(header);
      const value = res.headers[name.toLowerCase()];
      if (value === undefined) {
        assert.ok(!definition.required, `${where} without the required header ${name}`);
        continue;
      }
      const schema = definition.schema ?? {};
      const text = String(value);
      const typed =
        (schema.type === "integer" || schema.type === "number") && /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
      const validate = this.validator(`${id} ${status} header ${name}`, schema);
      assert.ok(validate(typed), `${where}: header ${name}: ${text}: ${this.ajv.errorsText(validate.errors)}`);
    }

    let statuses = this.answered.get(id);
    if (!statuses) this.answered.set(id, (statuses = new Set()));
    statuses.add(res.statusCode);
  }

  /** Checks what the service POSTed to an endpoint against the document's `webhooks`: the body, the signature headers. */
  checkDelivery(request: ReceivedRequest): void {
    const event = JSON.parse(request.body) as { type: string };
    const post = this.doc.webhooks?.[event.type]?.post as Json | undefined;
    assert.ok(post, `the document's webhooks describe ${event.type}`);
    const where = `a ${event.type} delivery (${post.operationId})`;
    const validate = this.validator(
      `${post.operationId} request`,
      this.resolve(post.requestBody).content["application/json"].schema,
    );
    assert.ok(
      validate(event),
      `${where}: the body does not match the documented schema: ${this.ajv.errorsText(validate.errors, { separator: "; " })}\n${request.body}`,
    );
    for (const parameter of (post.parameters ?? [])
      .map((p: Json) => this.resolve(p))
      .filter((p: Json) => p.in === "header")) {
      const value = request.headers[parameter.name.toLowerCase()];
      if (value === undefined) {
        assert.ok(!parameter.required, `${where} without the required header ${parameter.name}`);
        continue;
      }
      const check = this.validator(`${post.operationId} header ${parameter.name}`, parameter.schema ?? {});
      assert.ok(
        check(String(value)),
        `${where}: header ${parameter.name}: ${String(value)}: ${this.ajv.errorsText(check.errors)}`,
      );
    }
  }

  /** Why `call` is not a request the document describes for operation `id` (its parameters and JSON body). */
  requestProblems(id: string, call: Call): string[] {
    const { operation } = this.operation(id);
    const problems: string[] = [];
    const parameters = (operation.parameters ?? []).map((p: Json) => this.resolve(p));
    for (const place of ["path", "query"] as const) {
      const given = (place === "path" ? call.params : call.query) ?? {};
      const documented = parameters.filter((p: Json) => p.in === place);
      for (const p of documented)
        if (p.required && given[p.name] === undefined) problems.push(`${place} parameter ${p.name} is required`);
      for (const [name, text] of Object.entries(given)) {
        const p = documented.find((q: Json) => q.name === name);
        if (!p) {
          problems.push(`${place} parameter ${name} is not documented`);
          continue;
        }
        const schema = p.schema ?? {};
        const value =
          (schema.type === "integer" || schema.type === "number") && /^-?\d+(\.\d+)?$/.test(text) ? Number(text) : text;
        const validate = this.validator(`${id} ${place} ${name}`, schema);
        if (!validate(value)) problems.push(`${place} parameter ${name}: ${this.ajv.errorsText(validate.errors)}`);
      }
    }
    if (call.body === undefined) {
      const body = operation.requestBody ? this.resolve(operation.requestBody) : undefined;
      if (call.payload === undefined) {
        if (body?.required) problems.push("the body is required");
      } else if (!body?.content?.["application/json"]) {
        problems.push("the operation takes no JSON body");
      } else {
        const validate = this.validator(`${id} request`, body.content["application/json"].schema ?? {});
        if (!validate(call.payload))
          problems.push(...(validate.errors ?? []).map((e) => `body${e.instancePath} ${e.message}`));
      }
    }
    return problems;
  }

  private validator(cacheKey: string, schema: Json): ValidateFunction {
    let validate = this.validators.get(cacheKey);
    if (!validate) {
      validate = this.ajv.compile(rewriteRefs(schema));
      this.validators.set(cacheKey, validate);
    }
    return validate;
  }

  /** What a `$ref` of the document (`#/components/...`) points at; any other value as it is. */
  private resolve(node: Json): Json {
    if (typeof node?.$ref !== "string") return node;
    const target = (node.$ref as string)
      .replace(/^#\//, "")
      .split("/")
      .reduce((at: Json | undefined, key) => at?.[key], this.doc);
    assert.ok(target, `${node.$ref} resolves`);
    return this.resolve(target!);
  }
}

/** A copy of a schema whose `#/components/schemas/X` refs point at the schemas added to Ajv. */
function rewriteRefs(node: any): any {
  if (Array.isArray(node)) return node.map(rewriteRefs);
  if (node === null || typeof node !== "object") return node;
  return Object.fromEntries(
    Object.entries(node).map(([key, value]) => [
      key,
      key === "$ref" && typeof value === "string"
        ? value.replace(/^#\/components\/schemas\//, SCHEMAS)
        : rewriteRefs(value),
    ]),
  );
}

/** The suite's caller: `send(operationId, call)` calls the operation and checks its answer against the document. */
function documentClient(t: () => TestApp) {
  let checker: DocumentChecker;
  let key = "";
  const state = {
    get document() {
      return checker;
    },
    async load(fullKey: string) {
      const res = await t().call({ method: "GET", url: "/v1/openapi.json" });
      assert.equal(res.statusCode, 200);
      checker = new DocumentChecker(JSON.parse(res.body));
      key = fullKey;
    },
    async send(id: string, call: Call = {}): Promise<LightMyRequestResponse> {
      const res = await t().call(checker.request(id, call, key));
      checker.check(id, call, res);
      return res;
    },
    /** Like send, and the status must be `status`. */
    async expect(status: number, id: string, call: Call = {}): Promise<LightMyRequestResponse> {
      const res = await state.send(id, call);
      assert.equal(
        res.statusCode,
        status,
        `${id}: expected ${status}, got ${res.statusCode}: ${res.body.slice(0, 1000)}`,
      );
      return res;
    },
  };
  return state;
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"]);
const TOO_LARGE = JSON.stringify({ name: "x".repeat(1024 * 1024 + 16) });
const TERMS = (overrides: Record<string, unknown> = {}) =>
  uploadTerms({
    customer: { name: "Upload GmbH", external_id: "upload-gmbh", email: "ap@upload.example" },
    contract_id: "upload-2026",
    ...overrides,
  });
const file = (value: Buffer, name = "file"): MultipartPart => ({
  name,
  value,
  filename: "signed.pdf",
  type: "application/pdf",
});
const terms = (value: unknown): MultipartPart => ({
  name: "terms",
  value: typeof value === "string" ? value : JSON.stringify(value),
});
const form = async (parts: MultipartPart[]): Promise<Call> => {
  const { payload, headers } = await multipart(parts);
  return { body: payload, headers };
};

/** Contracts start the day they are made: made on March 1, with March usage, issued on April 6. */
const MARCH_1 = new Date("2026-03-01T08:00:00.000Z");
const APRIL_6 = new Date("2026-04-06T09:30:00.000Z");
const UNKNOWN_ID = "3b0c8f0e-8d6e-4c1a-9a52-7c1f0e6d2a11";

describeEachEngine(
  "the OpenAPI document tells the truth",
  (t) => {
    const api = documentClient(t);
    const receivers = receiverPool();
    /** A valid request to every operation, filled in as the resources are made; what the cross-cutting probes send. */
    const valid = new Map<string, Call>();
    let key = "";
    let companyId = "";

    before(async () => {
      t().clock.set(MARCH_1);
      ({ key, companyId } = await t().newCompany());
      await api.load(key);
    });

    it("customers: created, listed, refused", async () => {
      const customer = {
        name: "Contract Test GmbH",
        external_id: "ct-1",
        email: "billing@contract-test.example",
        domain: "contract-test.example",
        country: "DE",
        address: "Hauptstraße 1, Berlin",
        registration_number: "HRB 1",
        payment_terms_days: 15,
      };
      valid.set("createCustomer", { payload: { name: "Another customer" } });
      await api.expect(201, "createCustomer", { payload: customer });
      await api.expect(201, "createCustomer", { payload: { name: "Minimal" } });
      await api.expect(409, "createCustomer", { payload: customer });
      await api.expect(400, "createCustomer", { payload: { external_id: "no-name" } });
      await api.expect(400, "createCustomer", { payload: { name: "X", email: "not an email" } });
      await api.expect(400, "createCustomer", { payload: { name: "X", unknown_field: 1 } });

      valid.set("listCustomers", {});
      await api.expect(200, "listCustomers");
      await api.expect(200, "listCustomers", { key: null, headers: { "x-api-key": key } }); // the document's other scheme
      const page = await api.expect(200, "listCustomers", { query: { limit: "1" } });
      await api.expect(200, "listCustomers", { query: { limit: "1", starting_after: page.json().data[0].id } });
      await api.expect(200, "listCustomers", { query: { external_id: "ct-1" } });
      await api.expect(400, "listCustomers", { query: { limit: "0" } });
      await api.expect(400, "listCustomers", { query: { starting_after: UNKNOWN_ID } });
      await api.expect(200, "listCustomers", { query: { search: "contract test" } });
      await api.expect(400, "listCustomers", { query: { search: "" } });

      const id = (await api.expect(200, "listCustomers", { query: { external_id: "ct-1" } })).json().data[0].id;
      valid.set("getCustomer", { params: { id } });
      await api.expect(200, "getCustomer", { params: { id } });
      await api.expect(404, "getCustomer", { params: { id: UNKNOWN_ID } });
      await api.expect(404, "getCustomer", { params: { id: "not-a-uuid" } });
      await api.expect(400, "getCustomer", { params: { id: "x".repeat(101) } });

      valid.set("updateCustomer", { params: { id }, payload: { invoice_memo: "PO 1" } });
      await api.expect(200, "updateCustomer", {
        params: { id },
        payload: { tax_id: "DE1", invoice_memo: "PO 1", invoice_delivery: "email", country: null },
      });
      await api.expect(200, "updateCustomer", { params: { id }, payload: {} });
      await api.expect(400, "updateCustomer", { params: { id }, payload: { email: null } }); // email_required
      await api.expect(400, "updateCustomer", { params: { id }, payload: { unknown_field: 1 } });
      await api.expect(404, "updateCustomer", { params: { id: UNKNOWN_ID }, payload: { name: "X" } });
      const other = await createCustomer(t(), key, { name: "Holder", external_id: "held" });
      await api.expect(409, "updateCustomer", { params: { id }, payload: { external_id: other.external_id } });
    });

    it("the seller's account and its logo", async () => {
      valid.set("getAccount", {});
      await api.expect(200, "getAccount");
      valid.set("updateAccount", { payload: { invoice_footer: "Thanks" } });
      await api.expect(200, "updateAccount", {
        payload: { legal_name: "Seller GmbH", address: "A\nB", paper_size: "a4", payment_terms_days: 20 },
      });
      await api.expect(200, "updateAccount", { payload: { legal_name: null } });
      await api.expect(400, "updateAccount", { payload: { paper_size: "legal" } });
      await api.expect(400, "updateAccount", { payload: { unknown_field: 1 } });

      const png = { body: pngImage(4, 2), headers: { "content-type": "image/png" } };
      valid.set("putAccountLogo", png);
      valid.set("getAccountLogo", {});
      valid.set("deleteAccountLogo", {});
      await api.expect(404, "getAccountLogo");
      await api.expect(200, "putAccountLogo", png);
      await api.expect(200, "getAccountLogo");
      await api.expect(200, "putAccountLogo", { body: JPEG_16, headers: { "content-type": "image/jpeg" } });
      await api.expect(200, "getAccountLogo");
      await api.expect(400, "putAccountLogo", { body: "not a png", headers: { "content-type": "image/png" } });
      await api.expect(415, "putAccountLogo", { payload: { logo: "x" } });
      await api.expect(413, "putAccountLogo", {
        body: Buffer.alloc(1024 * 1024 + 1),
        headers: { "content-type": "image/png" },
      });
      await api.expect(200, "deleteAccountLogo");
      await api.expect(404, "getAccountLogo");
    });

    it("contracts and their agreements: sample and uploaded", async () => {
      const customer = await createCustomer(t(), key, { name: "Sample Buyer Inc" });
      const created = await api.expect(201, "createSampleContract", { payload: { customer_id: customer.id } });
      const contractId = created.json().id as string;
      valid.set("createSampleContract", { payload: { customer_id: customer.id } });
      await api.expect(404, "createSampleContract", { payload: { customer_id: UNKNOWN_ID } });
      await api.expect(400, "createSampleContract", { payload: {} });

      valid.set("listContracts", {});
      await api.expect(200, "listContracts");
      await api.expect(200, "listContracts", { query: { status: "active" } });
      await api.expect(400, "listContracts", { query: { status: "bogus" } });

      valid.set("getContract", { params: { ext_id: contractId } });
      await api.expect(200, "getContract", { params: { ext_id: contractId } });
      await api.expect(404, "getContract", { params: { ext_id: "no-such-contract" } });
      await api.expect(400, "getContract", { params: { ext_id: "x".repeat(256) } });

      valid.set("getContractAgreement", { params: { ext_id: contractId } });
      await api.expect(200, "getContractAgreement", { params: { ext_id: contractId } });
      await api.expect(404, "getContractAgreement", { params: { ext_id: "no-such-contract" } });
      await api.expect(400, "getContractAgreement", { params: { ext_id: "x".repeat(256) } });

      const pdf = await generatedAgreement();
      const uploaded = await api.expect(201, "uploadContract", await form([file(pdf), terms(TERMS())]));
      valid.set(
        "uploadContract",
        await form([file(pdf), terms(TERMS({ contract_id: "upload-2026-b", customer: { id: customer.id } }))]),
      );
      await api.expect(200, "getContractAgreement", { params: { ext_id: uploaded.json().id } });
      await api.expect(409, "uploadContract", await form([file(pdf), terms(TERMS({ customer: { id: customer.id } }))])); // contract_exists
      await api.expect(409, "uploadContract", await form([file(pdf), terms(TERMS({ contract_id: "upload-2026-c" }))])); // customer_exists
      await api.expect(
        404,
        "uploadContract",
        await form([file(pdf), terms(TERMS({ contract_id: "upload-2026-d", customer: { id: UNKNOWN_ID } }))]),
      );
      await api.expect(400, "uploadContract", await form([terms(TERMS({ contract_id: "upload-2026-e" }))])); // file_missing
      await api.expect(400, "uploadContract", await form([file(pdf), terms("{not json")]));
      await api.expect(
        400,
        "uploadContract",
        await form([file(pdf), terms(TERMS({ contract_id: "upload-2026-f", currency: 12 }))]),
      ); // invalid_terms
      await api.expect(
        400,
        "uploadContract",
        await form([
          file(pdf),
          terms(TERMS({ contract_id: "upload-2026-f", rules: [{ type: "usage", amount: "1" }] })),
        ]),
      ); // invalid_pricing_rule
      await api.expect(400, "uploadContract", await form([file(pdf)])); // terms_missing
      await api.expect(
        413,
        "uploadContract",
        await form([file(pdf), terms(TERMS({ contract_id: "upload-2026-f" })), { name: "note", value: "hi" }]),
      ); // an unknown part: too_many_fields
      await api.expect(
        400,
        "uploadContract",
        await form([file(Buffer.alloc(0)), terms(TERMS({ contract_id: "upload-2026-f" }))]),
      ); // file_empty
      await api.expect(
        400,
        "uploadContract",
        await form([file(Buffer.from("%PDF-1.7\nnot really")), terms(TERMS({ contract_id: "upload-2026-f" }))]),
      ); // file_unreadable
      const encrypted = await plainPdf(["secret"], { userPassword: "pw", ownerPassword: "owner" });
      await api.expect(
        400,
        "uploadContract",
        await form([file(encrypted), terms(TERMS({ contract_id: "upload-2026-f" }))]),
      ); // file_encrypted
      await api.expect(
        400,
        "uploadContract",
        await form([terms(TERMS({ contract_id: "upload-2026-f" })), file(pdf, "attachment")]),
      ); // unexpected_file
      await api.expect(400, "uploadContract", { body: "--x\r\n", headers: { "content-type": "multipart/form-data" } }); // no boundary: invalid_multipart
      // Past a count limit busboy skips the rest of the form; a skipped part as large as an agreement once left
      // the request unanswered (multipart-form.ts).
      await api.expect(413, "uploadContract", await form([file(pdf), file(pdf)])); // too_many_files
      await api.expect(
        413,
        "uploadContract",
        await form([
          file(Buffer.concat([pdf, Buffer.alloc(10 * 1024 * 1024)])),
          terms(TERMS({ contract_id: "upload-2026-f" })),
        ]),
      ); // file_too_large
      await api.expect(
        413,
        "uploadContract",
        await form([
          file(pdf),
          terms(JSON.stringify(TERMS({ contract_id: "upload-2026-f", padding: "x".repeat(1024 * 1024) }))),
        ]),
      ); // field_too_large
      await api.expect(
        413,
        "uploadContract",
        await form([...Array.from({ length: 201 }, (_, i) => ({ name: `f${i}`, value: "x" })), file(pdf)]),
      ); // too_many_fields
      await api.expect(
        415,
        "uploadContract",
        await form([file(Buffer.from("plain text, not a PDF")), terms(TERMS({ contract_id: "upload-2026-g" }))]),
      ); // file_not_pdf
      await api.expect(415, "uploadContract", { payload: TERMS() }); // not multipart

      valid.set("extractContract", await form([file(pdf)]));
      await api.expect(200, "extractContract", await form([file(pdf)]));
      await api.expect(200, "extractContract", await form([file(await plainPdf())])); // nothing_found
      await api.expect(400, "extractContract", await form([file(Buffer.alloc(0))])); // file_empty
      await api.expect(400, "extractContract", await form([file(pdf), terms(TERMS())])); // invalid_request
      await api.expect(413, "extractContract", await form([file(pdf), file(pdf)])); // too_many_files
      await api.expect(415, "extractContract", await form([file(Buffer.from("plain text, not a PDF"))])); // file_not_pdf
      await api.expect(415, "extractContract", { payload: TERMS() }); // not multipart

      // Open-ended, for an existing customer, with scoped rules: its program and agreement.
      const scoped = {
        name: "FX",
        type: "usage",
        metric: "fx_trade",
        rate: "0.001",
        counterparty: "Bank AG",
        counterparty_side: "buy",
        pair: "EURUSD",
      };
      const open = await api.expect(
        201,
        "uploadContract",
        await form([
          file(await plainPdf()),
          terms(
            TERMS({ contract_id: "upload-open", end_date: undefined, customer: { id: customer.id }, rules: [scoped] }),
          ),
        ]),
      );
      assert.equal(open.json().end_date, null);
      await api.expect(200, "getContractPricing", { params: { ext_id: "upload-open" } });
      await api.expect(200, "getContractAgreement", { params: { ext_id: "upload-open" } });
    });

    it("pricing: read, add, update, refused", async () => {
      const customer = await createCustomer(t(), key, { name: "Pricing Buyer Ltd" });
      const contractId = (
        await api.expect(201, "createSampleContract", { payload: { customer_id: customer.id } })
      ).json().id as string;
      const ext_id = contractId;

      valid.set("getContractPricing", { params: { ext_id } });
      const program = await api.expect(200, "getContractPricing", { params: { ext_id } });
      await api.expect(404, "getContractPricing", { params: { ext_id: "no-such-contract" } });
      await api.expect(400, "getContractPricing", { params: { ext_id: "x".repeat(256) } });

      const grantBody = { amount: "25.00", type: "prepaid", expires_on: "2026-12-31" };
      valid.set("createCreditGrant", { params: { ext_id }, payload: grantBody });
      const grant = await api.expect(201, "createCreditGrant", { params: { ext_id }, payload: grantBody });
      await api.expect(400, "createCreditGrant", { params: { ext_id }, payload: { ...grantBody, currency: "EUR" } });
      await api.expect(400, "createCreditGrant", { params: { ext_id }, payload: { amount: "1", type: "gift" } });
      await api.expect(404, "createCreditGrant", { params: { ext_id: "no-such-contract" }, payload: grantBody });
      valid.set("listCreditGrants", { params: { ext_id } });
      await api.expect(200, "listCreditGrants", { params: { ext_id } });
      await api.expect(404, "listCreditGrants", { params: { ext_id: "no-such-contract" } });
      valid.set("getCreditGrant", { params: { ext_id, grant_id: grant.json().id } });
      await api.expect(200, "getCreditGrant", { params: { ext_id, grant_id: grant.json().id } });
      await api.expect(404, "getCreditGrant", { params: { ext_id, grant_id: "cg_nope" } });

      const previewBody = {
        rules: [{ metric: "domestic_wire", amount: "25.00" }],
        billing_period_start: "2026-03-01",
        billing_period_end: "2026-03-31",
      };
      valid.set("previewContractPricing", { params: { ext_id }, payload: previewBody });
      await api.expect(200, "previewContractPricing", { params: { ext_id }, payload: previewBody });
      await api.expect(400, "previewContractPricing", {
        params: { ext_id },
        payload: { ...previewBody, billing_period_end: "2026-03-30" },
      });
      await api.expect(400, "previewContractPricing", {
        params: { ext_id },
        payload: { ...previewBody, rules: [{ metric: "x", model: "package" }] },
      });
      await api.expect(404, "previewContractPricing", { params: { ext_id: "no-such-contract" }, payload: previewBody });

      const rule = {
        id: "sepa",
        name: "SEPA transfer",
        type: "usage",
        metric: "sepa_transfer",
        amount: "0.25",
        monthly_cap: "100",
      };
      valid.set("addPricingRule", { params: { ext_id }, payload: { metric: "card_payment", rate: 0.029 } });
      await api.expect(201, "addPricingRule", { params: { ext_id }, payload: rule });
      await api.expect(201, "addPricingRule", {
        params: { ext_id },
        payload: { metric: "fx", rate: "0.123456789012" },
      });
      await api.expect(409, "addPricingRule", { params: { ext_id }, payload: rule });
      await api.expect(400, "addPricingRule", { params: { ext_id }, payload: { type: "usage", amount: "1" } }); // no metric
      await api.expect(400, "addPricingRule", { params: { ext_id }, payload: { type: "weekly" } });
      await api.expect(201, "addPricingRule", {
        params: { ext_id },
        payload: { metric: "ach_debit", amount: "0.28", effective_date: "2026-04-01" },
      });
      await api.expect(400, "addPricingRule", {
        params: { ext_id },
        payload: { metric: "ach_credit", amount: "0.28", effective_date: "2025-04-01" },
      });
      await api.expect(404, "addPricingRule", { params: { ext_id: "no-such-contract" }, payload: rule });

      const ruleId = program.json().rules[0].id as string;
      valid.set("updatePricingRule", { params: { ext_id, rule_id: ruleId }, payload: { name: "Renamed" } });
      await api.expect(200, "updatePricingRule", { params: { ext_id, rule_id: ruleId }, payload: { name: "Renamed" } });
      await api.expect(200, "updatePricingRule", {
        params: { ext_id, rule_id: "sepa" },
        payload: { monthly_cap: null },
      });
      await api.expect(400, "updatePricingRule", { params: { ext_id, rule_id: "sepa" }, payload: { id: "other" } });
      await api.expect(400, "updatePricingRule", { params: { ext_id, rule_id: "sepa" }, payload: { type: "weekly" } });
      await api.expect(404, "updatePricingRule", {
        params: { ext_id, rule_id: "no-such-rule" },
        payload: { name: "X" },
      });
      await api.expect(404, "updatePricingRule", {
        params: { ext_id: "no-such-contract", rule_id: "sepa" },
        payload: { name: "X" },
      });
    });

    it("usage and invoices: submitted, listed, projected, issued, paid, voided", async () => {
      // Two contracts made on March 1, with March usage.
      const customer = await createCustomer(t(), key, { name: "Usage Buyer SA", payment_terms_days: 30 });
      const paid = (await api.expect(201, "createSampleContract", { payload: { customer_id: customer.id } })).json()
        .id as string;
      const other = await createCustomer(t(), key, { name: "Void Buyer SA" });
      const voided = (await api.expect(201, "createSampleContract", { payload: { customer_id: other.id } })).json()
        .id as string;

      const ended = (await api.expect(201, "createSampleContract", { payload: { customer_id: other.id } })).json()
        .id as string;
      await setContractStatus(t(), companyId, ended, "cancelled");
      await api.expect(201, "addPricingRule", {
        params: { ext_id: paid },
        payload: { type: "one_time", name: "Onboarding", amount: "250" },
      });
      const event = usageEvent(paid, { event_id: "evt-contract-1", quantity: "123456789.123456789012" });
      const submitted = await api.expect(200, "submitUsage", {
        payload: {
          events: [
            event,
            usageEvent(paid, { metric: "international_wire", quantity: 2 }),
            usageEvent(voided),
            usageEvent(paid, { metric: "no_such_metric" }),
            usageEvent("no-such-contract"),
            { ...usageEvent(paid), quantity: "lots" },
            { ...usageEvent(paid), colour: "red" },
            "not an event",
            event,
            { ...event, quantity: 2 }, // differs
            usageEvent(paid, { fee_amount: "1.5", applied_rate: "0.25" }),
            usageEvent(paid, { timestamp: "2025-01-10T00:00:00Z" }), // outside_contract_term
            usageEvent(ended), // contract_not_active
          ],
        },
      });
      assert.ok(submitted.json().rejected >= 3 && submitted.json().accepted >= 3, submitted.body);
      valid.set("submitUsage", { payload: { events: [usageEvent(paid)] } });
      await api.expect(400, "submitUsage", { payload: { events: [] } });
      await api.expect(400, "submitUsage", { payload: {} });

      valid.set("listUsageEvents", {});
      const events = await api.expect(200, "listUsageEvents", { query: { contract: paid, limit: "1" } });
      await api.expect(200, "listUsageEvents", {
        query: { contract: paid, limit: "1", starting_after: events.json().data[0].id },
      });
      await api.expect(200, "listUsageEvents", {
        query: { metric: "domestic_wire", from: "2026-03-01", to: "2026-03-31", status: "rated" },
      });
      await api.expect(400, "listUsageEvents", { query: { starting_after: "no-such-event" } });
      await api.expect(400, "listUsageEvents", { query: { from: "March" } });

      await api.expect(200, "submitUsage", { payload: { events: [usageEvent(paid, { event_id: "evt-to-void" })] } });
      valid.set("voidUsageEvent", { params: { event_id: "evt-to-void" }, payload: { reason: "sent twice" } });
      await api.expect(200, "voidUsageEvent", {
        params: { event_id: "evt-to-void" },
        payload: { reason: "sent twice" },
      });
      await api.expect(200, "voidUsageEvent", { params: { event_id: "evt-to-void" } });
      await api.expect(404, "voidUsageEvent", { params: { event_id: "no-such-event" } });
      await api.expect(400, "voidUsageEvent", { params: { event_id: "evt-to-void" }, payload: { reason: 5 } });

      valid.set("getUsageEvent", { params: { event_id: "evt-contract-1" } });
      await api.expect(200, "getUsageEvent", { params: { event_id: "evt-contract-1" } });
      await api.expect(404, "getUsageEvent", { params: { event_id: "no-such-event" } });
      await api.expect(400, "getUsageEvent", { params: { event_id: "x".repeat(256) } });

      const march = { billing_period_start: "2026-03-01", billing_period_end: "2026-03-31" };
      valid.set("projectInvoice", { payload: { external_contract_id: paid, ...march } });
      const projected = await api.expect(200, "projectInvoice", { payload: { external_contract_id: paid, ...march } });
      const paidNumber = projected.json().number as string;
      await api.expect(200, "projectInvoice", { payload: { external_contract_id: voided, ...march } });
      const april = await api.expect(200, "projectInvoice", {
        payload: { external_contract_id: paid, billing_period_start: "2026-04-01", billing_period_end: "2026-04-30" },
      });
      const draftNumber = april.json().number as string;
      await api.expect(400, "projectInvoice", {
        payload: { external_contract_id: paid, billing_period_start: "2026-03-01", billing_period_end: "2026-03-15" },
      });
      await api.expect(400, "projectInvoice", {
        payload: { external_contract_id: paid, billing_period_start: "2025-01-01", billing_period_end: "2025-01-31" },
      });
      await api.expect(400, "projectInvoice", {
        payload: { external_contract_id: paid, billing_period_start: "March" },
      });
      await api.expect(404, "projectInvoice", { payload: { external_contract_id: "no-such-contract", ...march } });

      valid.set("listInvoices", {});
      const invoices = await api.expect(200, "listInvoices", { query: { limit: "1" } });
      await api.expect(200, "listInvoices", { query: { limit: "1", starting_after: invoices.json().data[0].number } });
      await api.expect(200, "listInvoices", { query: { contract: paid, status: "draft" } });
      await api.expect(400, "listInvoices", { query: { from: "March" } });
      await api.expect(400, "listInvoices", { query: { limit: "101" } });
      await api.expect(400, "listInvoices", { query: { starting_after: "no-such-invoice" } });

      const number = (value: string) => ({ params: { number: value } });
      const voidNumber = (await api.expect(200, "listInvoices", { query: { contract: voided } })).json().data[0]
        .number as string;
      for (const id of ["getInvoice", "getInvoicePdf", "getInvoiceUsageStatement"]) {
        valid.set(id, number(paidNumber));
        await api.expect(200, id, number(paidNumber));
        await api.expect(200, id, number(draftNumber));
        await api.expect(404, id, number("INV-NOPE"));
        await api.expect(400, id, number("x".repeat(65)));
      }

      t().clock.set(APRIL_6);
      await api.expect(409, "payInvoice", number(paidNumber)); // a draft
      await api.expect(409, "voidInvoice", number(paidNumber)); // a draft
      valid.set("finalizeInvoice", number(paidNumber));
      await api.expect(200, "finalizeInvoice", number(paidNumber));
      await api.expect(200, "finalizeInvoice", number(paidNumber)); // again: unchanged
      await api.expect(200, "finalizeInvoice", number(voidNumber));
      await api.expect(409, "projectInvoice", { payload: { external_contract_id: paid, ...march } }); // invoice_is_issued
      const late = await api.expect(200, "submitUsage", {
        payload: { events: [usageEvent(paid, { timestamp: MARCH })] },
      });
      assert.equal(late.json().events[0].error?.code, "period_closed", late.body);
      await api.expect(409, "voidUsageEvent", { params: { event_id: "evt-contract-1" } });
      await api.expect(409, "addPricingRule", {
        params: { ext_id: paid },
        payload: { metric: "late_fee", amount: "1", effective_date: "2026-03-10" },
      });
      await api.expect(400, "payInvoice", { ...number(paidNumber), payload: { paid_date: "2027-01-01" } }); // in the future
      await api.expect(400, "payInvoice", { ...number(paidNumber), payload: { paid_date: "2026-02-01" } }); // before issue
      await api.expect(400, "payInvoice", { ...number(paidNumber), payload: { paid_date: "soon" } });
      valid.set("payInvoice", number(paidNumber));
      await api.expect(200, "payInvoice", { ...number(paidNumber), payload: { paid_date: "2026-04-06" } });
      await api.expect(200, "payInvoice", number(paidNumber)); // again, without a body: unchanged
      await api.expect(409, "payInvoice", { ...number(paidNumber), payload: { paid_date: "2026-04-05" } }); // paid on another day
      await api.expect(409, "voidInvoice", number(paidNumber)); // paid
      valid.set("voidInvoice", number(voidNumber));
      await api.expect(200, "voidInvoice", number(voidNumber));
      await api.expect(200, "voidInvoice", number(voidNumber)); // again: unchanged
      await api.expect(409, "finalizeInvoice", number(voidNumber));
      await api.expect(409, "payInvoice", number(voidNumber));
      await api.expect(409, "projectInvoice", { payload: { external_contract_id: paid, ...march } }); // invoice_is_paid
      // The void invoice was reissued: projection brings its reissued draft up to date.
      const reissued = await api.expect(200, "projectInvoice", { payload: { external_contract_id: voided, ...march } });
      const reissueNumber = reissued.json().number as string;
      await api.expect(409, "voidInvoice", number(reissueNumber)); // a draft
      await api.expect(409, "recordInvoicePayment", {
        ...number(reissueNumber),
        payload: { amount: "1", method: "ach" },
      }); // a draft
      await api.expect(200, "finalizeInvoice", number(reissueNumber));
      valid.set("recordInvoicePayment", { ...number(reissueNumber), payload: { amount: "1.00", method: "ach" } });
      await api.expect(201, "recordInvoicePayment", {
        ...number(reissueNumber),
        payload: { amount: "100.25", method: "wire", reference: "FT-1", paid_on: "2026-04-06" },
      });
      await api.expect(409, "recordInvoicePayment", {
        ...number(reissueNumber),
        payload: { amount: "99999999", method: "ach" },
      });
      await api.expect(400, "recordInvoicePayment", {
        ...number(reissueNumber),
        payload: { amount: "1.001", method: "ach" },
      });
      await api.expect(400, "recordInvoicePayment", {
        ...number(reissueNumber),
        payload: { amount: "1", method: "barter" },
      });
      await api.expect(404, "recordInvoicePayment", { ...number("INV-NOPE"), payload: { amount: "1", method: "ach" } });
      await api.expect(409, "voidInvoice", number(reissueNumber)); // it has a payment
      valid.set("createCreditNote", { ...number(reissueNumber), payload: { amount: "1.00", reason: "Goodwill" } });
      const note = await api.expect(201, "createCreditNote", {
        ...number(reissueNumber),
        payload: { lines: [{ line: 0, amount: "5.00" }], reason: "Fee charged twice" },
      });
      await api.expect(400, "createCreditNote", {
        ...number(reissueNumber),
        payload: { lines: [{ line: 999, amount: "1" }], reason: "x" },
      });
      await api.expect(409, "createCreditNote", {
        ...number(reissueNumber),
        payload: { amount: "99999999", reason: "x" },
      });
      await api.expect(409, "createCreditNote", { ...number(voidNumber), payload: { amount: "1", reason: "x" } }); // void
      await api.expect(404, "createCreditNote", { ...number("INV-NOPE"), payload: { amount: "1", reason: "x" } });
      valid.set("listInvoiceCreditNotes", number(reissueNumber));
      await api.expect(200, "listInvoiceCreditNotes", number(reissueNumber));
      await api.expect(404, "listInvoiceCreditNotes", number("INV-NOPE"));
      valid.set("getCreditNote", number(note.json().number));
      await api.expect(200, "getCreditNote", number(note.json().number));
      await api.expect(404, "getCreditNote", number("CN-999999"));
      valid.set("getCreditNotePdf", number(note.json().number));
      const notePdf = await api.expect(200, "getCreditNotePdf", number(note.json().number));
      assert.equal(notePdf.headers["content-type"], "application/pdf");
      await api.expect(404, "getCreditNotePdf", number("CN-999999"));
      for (const id of ["finalizeInvoice", "payInvoice", "voidInvoice"]) await api.expect(404, id, number("INV-NOPE"));
      for (const status of ["paid", "void", "issued", "open", "overdue"])
        await api.expect(200, "listInvoices", { query: { status } });
      await api.expect(400, "listInvoices", { query: { status: "unpaid" } });
      valid.set("getReceivablesReport", {});
      await api.expect(200, "getReceivablesReport");
      await api.expect(200, "getReceivablesReport", { query: { currency: "USD" } });
      await api.expect(400, "getReceivablesReport", { query: { currency: "usd" } });
      await api.expect(200, "getInvoice", number(voidNumber));
      await api.expect(200, "getInvoicePdf", number(voidNumber));
      await api.expect(200, "getInvoiceUsageStatement", number(voidNumber));

      // Delivery: the message log, sending again, the hosted link.
      valid.set("listInvoiceMessages", number(paidNumber));
      await api.expect(200, "listInvoiceMessages", number(paidNumber));
      await api.expect(200, "listInvoiceMessages", number(draftNumber));
      await api.expect(404, "listInvoiceMessages", number("INV-NOPE"));
      await api.expect(400, "listInvoiceMessages", number("x".repeat(65)));
      valid.set("sendInvoice", number(paidNumber));
      await api.expect(202, "sendInvoice", number(paidNumber));
      await api.expect(409, "sendInvoice", number(draftNumber));
      await api.expect(409, "sendInvoice", number(voidNumber));
      await api.expect(404, "sendInvoice", number("INV-NOPE"));
      valid.set("revokeInvoiceHostedLink", number(paidNumber));
      await api.expect(200, "revokeInvoiceHostedLink", number(paidNumber));
      await api.expect(200, "revokeInvoiceHostedLink", number(voidNumber));
      await api.expect(409, "revokeInvoiceHostedLink", number(draftNumber));
      await api.expect(404, "revokeInvoiceHostedLink", number("INV-NOPE"));
    });

    it("webhook endpoints and their deliveries", async () => {
      const receiver = await receivers.start();
      const created = await api.expect(201, "createWebhookEndpoint", {
        payload: { url: receiver.url, description: "ERP", events: ["customer.created"] },
      });
      const id = created.json().id as string;
      valid.set("createWebhookEndpoint", { payload: { url: receiver.url } });
      await api.expect(400, "createWebhookEndpoint", { payload: { url: "https://user:secret@example.com/hook" } }); // invalid_url
      await api.expect(400, "createWebhookEndpoint", { payload: { url: receiver.url, events: ["invoice.created"] } });
      await api.expect(400, "createWebhookEndpoint", { payload: {} });

      const ids = (value: string) => ({ params: { id: value } });
      valid.set("listWebhookEndpoints", {});
      await api.expect(200, "listWebhookEndpoints");
      for (const op of ["getWebhookEndpoint", "listWebhookDeliveries"]) {
        valid.set(op, ids(id));
        await api.expect(200, op, ids(id));
        await api.expect(404, op, ids(UNKNOWN_ID));
        await api.expect(400, op, ids("x".repeat(101)));
      }

      valid.set("updateWebhookEndpoint", { ...ids(id), payload: { description: "changed" } });
      await api.expect(200, "updateWebhookEndpoint", {
        ...ids(id),
        payload: { description: null, events: ["customer.created", "contract.created"] },
      });
      await api.expect(400, "updateWebhookEndpoint", { ...ids(id), payload: { url: "ftp://example.com/hook" } }); // invalid_url
      await api.expect(400, "updateWebhookEndpoint", { ...ids(id), payload: { enabled: "no" } });
      await api.expect(404, "updateWebhookEndpoint", { ...ids(UNKNOWN_ID), payload: { description: "x" } });

      valid.set("rotateWebhookEndpointSecret", ids(id));
      await api.expect(200, "rotateWebhookEndpointSecret", ids(id));
      await api.expect(404, "rotateWebhookEndpointSecret", ids(UNKNOWN_ID));

      valid.set("testWebhookEndpoint", { ...ids(id), payload: { type: "customer.created" } });
      const sent = await api.expect(200, "testWebhookEndpoint", { ...ids(id), payload: { type: "contract.created" } });
      // The invoice events' sample invoices, checked below against the document's Invoice like every delivery.
      for (const type of [
        "invoice.issued",
        "invoice.paid",
        "invoice.voided",
        "invoice.payment_recorded",
        "credit_note.created",
      ])
        await api.expect(200, "testWebhookEndpoint", { ...ids(id), payload: { type } });
      receiver.answerWith(500);
      await api.expect(200, "testWebhookEndpoint", { ...ids(id), payload: { type: "customer.created" } });
      await api.expect(400, "testWebhookEndpoint", { ...ids(id), payload: { type: "invoice.created" } });
      await api.expect(404, "testWebhookEndpoint", { ...ids(UNKNOWN_ID), payload: { type: "customer.created" } });
      await api.expect(200, "listWebhookDeliveries", ids(id)); // succeeded and failed ones

      // A delivery made when a customer is created, still pending: the worker is not running.
      await createCustomer(t(), key, { name: "Announced Ltd" });
      await api.expect(200, "listWebhookDeliveries", ids(id));

      const deliveryId = sent.json().id as string;
      receiver.answerWith(200);
      valid.set("resendWebhookDelivery", ids(deliveryId));
      await api.expect(200, "resendWebhookDelivery", ids(deliveryId));
      await api.expect(404, "resendWebhookDelivery", ids(UNKNOWN_ID));
      await api.expect(400, "resendWebhookDelivery", ids("x".repeat(101)));

      await api.expect(200, "updateWebhookEndpoint", { ...ids(id), payload: { enabled: false } });
      await api.expect(409, "testWebhookEndpoint", { ...ids(id), payload: { type: "customer.created" } });
      await api.expect(409, "resendWebhookDelivery", ids(deliveryId));
      await api.expect(200, "updateWebhookEndpoint", { ...ids(id), payload: { enabled: true } });

      const doomed = (await api.expect(201, "createWebhookEndpoint", { payload: { url: receiver.url } })).json()
        .id as string;
      valid.set("deleteWebhookEndpoint", ids(doomed));
      await api.expect(200, "deleteWebhookEndpoint", ids(doomed));
      await api.expect(404, "deleteWebhookEndpoint", ids(doomed));
      await api.expect(400, "deleteWebhookEndpoint", ids("x".repeat(101)));

      // What reached the receiver is what the document's `webhooks` describe.
      assert.ok(receiver.requests.length >= 3, `${receiver.requests.length} deliveries received`);
      for (const request of receiver.requests) api.document.checkDelivery(request);
    });

    it("every operation: 401 without a key or with a bad one, 403 without its scope, and the body errors where it reads one", async () => {
      const { companyId } = await t().newCompany();
      const webhooksReader = (await t().app.services.access.createApiKey(companyId, { scopes: ["webhooks:read"] })).key;
      const usageReader = (await t().app.services.access.createApiKey(companyId, { scopes: ["usage:read"] })).key;
      for (const [id, { method }] of api.document.operations) {
        const call = valid.get(id);
        assert.ok(call, `a valid request to ${id} was made`);
        await api.expect(401, id, { ...call, key: null });
        await api.expect(401, id, { ...call, key: "sk_nope" });
        await api.expect(401, id, { ...call, key: null, headers: { ...call.headers, authorization: "Basic abc" } });
        const forbidden = [
          await api.send(id, { ...call, key: webhooksReader }),
          await api.send(id, { ...call, key: usageReader }),
        ];
        assert.ok(
          forbidden.some((res) => res.statusCode === 403),
          `${id} answers 403 to a key without its scope`,
        );
        // A URL escape that is not UTF-8 (an overlong "/") is refused as such, on every operation.
        assert.equal(
          (await api.expect(400, id, { ...call, rawQuery: "note=%C0%AF" })).json().code,
          "invalid_encoding",
          id,
        );
        if (!BODY_METHODS.has(method)) continue;
        const { payload: _payload, body: _body, headers: _headers, ...bare } = call;
        await api.expect(400, id, { ...bare, body: "{not json", headers: { "content-type": "application/json" } });
        const notUtf8 = Buffer.concat([Buffer.from('{"name":"'), Buffer.from([0xff]), Buffer.from('"}')]);
        assert.equal(
          (
            await api.expect(400, id, { ...bare, body: notUtf8, headers: { "content-type": "application/json" } })
          ).json().code,
          "invalid_encoding",
          id,
        );
        await api.expect(413, id, { ...bare, body: TOO_LARGE, headers: { "content-type": "application/json" } });
        await api.expect(415, id, { ...bare, body: "hello", headers: { "content-type": "text/plain" } });
      }
    });

    it("every operation answered a 2xx and a 4xx, each checked against the document", () => {
      const missing = [...api.document.operations.keys()].flatMap((id) => {
        const statuses = [...(api.document.answered.get(id) ?? [])];
        return [
          ...(statuses.some((s) => s >= 200 && s < 300) ? [] : [`${id}: no 2xx`]),
          ...(statuses.some((s) => s >= 400 && s < 500) ? [] : [`${id}: no 4xx`]),
        ];
      });
      assert.deepEqual(missing, []);
    });
  },
  // Endpoints on a local receiver; bad keys on every operation, more than the address's default budget of failures.
  { env: { BILLING_WEBHOOK_ALLOW_PRIVATE: "true", BILLING_AUTH_FAILURES: "off" }, clockStart: MARCH_1 },
);

describeEachEngine(
  "the OpenAPI document tells the truth about 429",
  (t) => {
    const api = documentClient(t);
    let key = "";

    before(async () => {
      key = (await t().newCompany()).key;
      await api.load(key);
    });

    it("every operation answers 429 with Retry-After once the key has used its rate, or the address its failed attempts", async () => {
      // Rate and failures are checked before the request is read: any path parameters will do.
      const params = { ext_id: "c", rule_id: "r", event_id: "e", number: "n", id: "i", grant_id: "g" };
      const call = (id: string): Call => ({
        params: Object.fromEntries(
          api.document
            .operation(id)
            .path.match(/\{[^}]+\}/g)
            ?.map((p) => [p.slice(1, -1), params[p.slice(1, -1) as keyof typeof params]]) ?? [],
        ),
      });
      const first = [...api.document.operations.keys()][0]!;
      await api.send(first, call(first)); // the key's one request a minute
      await api.expect(401, first, { ...call(first), key: "sk_nope" }); // the address's one failure a minute
      for (const id of api.document.operations.keys()) {
        const limited = await api.expect(429, id, call(id));
        assert.equal(limited.json().code, "rate_limited");
        const failed = await api.expect(429, id, { ...call(id), key: "sk_nope" });
        assert.equal(failed.json().code, "too_many_failed_attempts");
      }
      const missing = [...api.document.operations.keys()].filter((id) => !api.document.answered.get(id)?.has(429));
      assert.deepEqual(missing, []);
    });
  },
  { env: { BILLING_RATE_LIMIT: "1/m", BILLING_AUTH_FAILURES: "1" } },
);
