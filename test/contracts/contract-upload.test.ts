import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { PDF_QUEUE } from "../../src/platform/pdf-text.js";
import {
  CONTRACTS,
  createCustomer,
  createSampleContract,
  getPricing,
  keyWithScopes,
  type Contract,
} from "../support/api.js";
import { expectError, expectStatus } from "../support/assertions.js";
import {
  assertServedAsUpload,
  bombPdf,
  generatedAgreement,
  multipart,
  uploadFootprint,
  plainPdf,
  uploadTerms,
  type MultipartPart,
} from "../support/uploads.js";

const UPLOAD = `${CONTRACTS}/upload`;

const terms = uploadTerms;

async function upload(t: TestApp, key: string | undefined, parts: MultipartPart[]) {
  const body = await multipart(parts);
  return t.call({ method: "POST", url: UPLOAD, ...(key ? { key } : {}), payload: body.payload, headers: body.headers });
}

const filePart = (value: Buffer, filename = "signed-agreement.pdf", type = "application/pdf"): MultipartPart => ({
  name: "file",
  value,
  filename,
  type,
});
const termsPart = (value: unknown): MultipartPart => ({
  name: "terms",
  value: typeof value === "string" ? value : JSON.stringify(value),
});

describeEachEngine("contract upload (API)", (t) => {
  it("creates the customer, then the contract with its program, from the PDF and its terms; the file is served to its company only", async () => {
    const { key, companyId } = await t().newCompany();
    const pdf = await generatedAgreement();
    const sent = terms();
    const res = await upload(t(), key, [filePart(pdf), termsPart(sent)]);
    expectStatus(res, 201);
    const contract = res.json() as Contract;
    assert.equal(contract.object, "contract");
    assert.equal(contract.id, sent.contract_id);
    assert.equal(contract.customer_name, "Acme Europe GmbH");
    assert.equal(contract.status, "active");
    assert.equal(contract.sample, false);
    assert.equal(contract.currency, "EUR");
    assert.equal(contract.start_date, "2026-01-01");
    assert.equal(contract.end_date, "2026-12-31");
    assert.equal(contract.billing_cadence, "monthly");
    assert.deepEqual(contract.metrics, ["sepa_transfer", "card_payment"]);
    assert.equal(
      contract.pdf_url,
      `http://localhost:8080/v1/billing/contracts/${encodeURIComponent(String(sent.contract_id))}/agreement.pdf`,
    );

    const program = await getPricing(t(), key, contract.id);
    assert.equal(program.version, 1);
    assert.equal(program.effective_date, "2026-01-01");
    assert.deepEqual(
      program.rules.map((r) => [
        r.name,
        r.type,
        r.model,
        r.metric,
        r.amount,
        r.rate === null ? null : String(r.rate),
        r.monthly_cap,
        r.currency,
      ]),
      [
        ["SEPA transfer", "usage", "flat", "sepa_transfer", "0.25", null, "500.00", "EUR"],
        ["Card payments", "usage", "percentage", "card_payment", null, "0.029", null, "EUR"],
        ["Platform fee", "subscription", "flat", null, "99.00", null, null, "EUR"],
        ["Monthly minimum", "minimum", "flat", null, "1000.00", null, null, "EUR"],
      ],
    );

    // Both events are in the outbox, for the webhooks.
    const { rows } = await t().app.db.query<{ type: string }>("SELECT type FROM events WHERE company_id = $1", [
      companyId,
    ]);
    assert.deepEqual(rows.map((r) => r.type).sort(), ["contract.created", "customer.created"]);

    const file = await t().call({ method: "GET", url: new URL(contract.pdf_url).pathname, key });
    expectStatus(file, 200);
    assert.equal(file.headers["content-type"], "application/pdf");
    assertServedAsUpload(file, "signed-agreement.pdf");
    assert.ok(file.rawPayload.equals(pdf), "the agreement is served byte for byte as uploaded");

    // The service's own agreement is no one's upload: it stays inline, without the sandbox.
    const sample = await createSampleContract(t(), key, contract.customer_id);
    const generated = await t().call({ method: "GET", url: `${CONTRACTS}/${sample.id}/agreement.pdf`, key });
    expectStatus(generated, 200);
    assert.match(String(generated.headers["content-disposition"]), /^inline; filename="CTR-\d+\.pdf"$/);
    assert.equal(generated.headers["content-security-policy"], undefined);

    expectError(await t().call({ method: "GET", url: new URL(contract.pdf_url).pathname }), 401);
    const other = await t().newCompany();
    expectError(
      await t().call({ method: "GET", url: new URL(contract.pdf_url).pathname, key: other.key }),
      404,
      "not_found",
    );
  });

  it("takes an existing customer by id, keeps every digit of a JSON number, and an open-ended term", async () => {
    const { key } = await t().newCompany();
    const customer = await createCustomer(t(), key, { name: "Globex" });
    const text = `{"customer":{"id":"${customer.id}"},"contract_id":"globex-1","start_date":"2026-02-01","currency":"USD","rules":[{"type":"usage","metric":"api_call","amount":1234567890.123456789012}]}`;
    const res = await upload(t(), key, [filePart(await plainPdf()), termsPart(text)]);
    expectStatus(res, 201);
    const contract = res.json() as Contract;
    assert.equal(contract.customer_id, customer.id);
    assert.equal(contract.end_date, null);
    const program = await getPricing(t(), key, contract.id);
    assert.equal(program.rules[0]!.amount, "1234567890.123456789012");
  });

  it("stores a new customer's address, as reading an agreement proposes it", async () => {
    const { key } = await t().newCompany();
    const address = "200 Harbor Way, Suite 400, Oakland, CA 94607";
    const res = await upload(t(), key, [
      filePart(await plainPdf()),
      termsPart(terms({ contract_id: "harbor-2026", customer: { name: "Harbor Freight Logistics Inc.", address } })),
    ]);
    expectStatus(res, 201);
    const customer = await t().call({
      method: "GET",
      url: `/v1/billing/customers/${(res.json() as Contract).customer_id}`,
      key,
    });
    expectStatus(customer, 200);
    assert.equal(customer.json().address, address);
  });

  it("takes the terms sent as a file part too (curl -F terms=@terms.json), in either order", async () => {
    const { key } = await t().newCompany();
    for (const order of ["file first", "terms first"]) {
      const asFile: MultipartPart = {
        name: "terms",
        value: Buffer.from(JSON.stringify(terms())),
        filename: "terms.json",
        type: "application/json",
      };
      const parts =
        order === "file first" ? [filePart(await plainPdf()), asFile] : [asFile, filePart(await plainPdf())];
      expectStatus(await upload(t(), key, parts), 201);
    }
  });

  it("refuses every kind of file that cannot be the agreement, writing nothing", async () => {
    const { key, companyId } = await t().newCompany();
    const before = await uploadFootprint(t(), companyId);
    const cases: Array<[string, MultipartPart[], number, string]> = [
      ["empty", [filePart(Buffer.alloc(0)), termsPart(terms())], 400, "file_empty"],
      [
        "not a PDF",
        [filePart(Buffer.from("PK\u0003\u0004 a zip file"), "terms.docx", "application/zip"), termsPart(terms())],
        415,
        "file_not_pdf",
      ],
      [
        "a PDF only by name",
        [filePart(Buffer.from("hello"), "agreement.pdf"), termsPart(terms())],
        415,
        "file_not_pdf",
      ],
      [
        "encrypted with a password",
        [filePart(await plainPdf(["secret"], { userPassword: "open", ownerPassword: "owner" })), termsPart(terms())],
        400,
        "file_encrypted",
      ],
      [
        "encrypted, owner password only",
        [
          filePart(await plainPdf(["secret"], { ownerPassword: "owner", permissions: { printing: "highResolution" } })),
          termsPart(terms()),
        ],
        400,
        "file_encrypted",
      ],
      ["damaged", [filePart(Buffer.from("%PDF-1.7\n1 0 obj broken")), termsPart(terms())], 400, "file_unreadable"],
      [
        "over 10 MB",
        [filePart(Buffer.concat([Buffer.from("%PDF-1.4\n"), Buffer.alloc(10 * 1024 * 1024)])), termsPart(terms())],
        413,
        "file_too_large",
      ],
      ["no file", [termsPart(terms())], 400, "file_missing"],
      ["no terms", [filePart(await plainPdf())], 400, "terms_missing"],
      ["terms not JSON", [filePart(await plainPdf()), termsPart("{contract_id: acme}")], 400, "invalid_json"],
      [
        "a file in another part",
        [{ ...filePart(await plainPdf()), name: "document" }, termsPart(terms())],
        400,
        "unexpected_file",
      ],
      // Two file parts are one code whatever their order and names (multipart-form.ts), never too_many_fields.
      [
        "two files",
        [filePart(await plainPdf()), filePart(await plainPdf()), termsPart(terms())],
        413,
        "too_many_files",
      ],
      [
        "two files after the terms",
        [termsPart(terms()), filePart(await plainPdf()), filePart(await plainPdf())],
        413,
        "too_many_files",
      ],
      [
        "a file in another part, then the file",
        [{ ...filePart(await plainPdf()), name: "document" }, filePart(await plainPdf()), termsPart(terms())],
        413,
        "too_many_files",
      ],
      [
        "the file, then a file in another part",
        [filePart(await plainPdf()), { ...filePart(await plainPdf()), name: "document" }, termsPart(terms())],
        413,
        "too_many_files",
      ],
      [
        "the terms, a file in another part, then the file",
        [termsPart(terms()), { ...filePart(await plainPdf()), name: "document" }, filePart(await plainPdf())],
        413,
        "too_many_files",
      ],
      [
        "an unknown part",
        [filePart(await plainPdf()), termsPart(terms()), { name: "note", value: "hi" }],
        413,
        "too_many_fields",
      ],
      ["terms twice", [filePart(await plainPdf()), termsPart(terms()), termsPart(terms())], 413, "too_many_fields"],
      [
        "a PDF that unpacks into a gigabyte",
        [filePart(bombPdf(1024 * 1024 * 1024)), termsPart(terms())],
        400,
        "file_too_complex",
      ],
      // Its page's content is what unpacks: the API reads every page's content, as the dashboard does.
      [
        "a PDF whose page content unpacks into a gigabyte",
        [filePart(bombPdf(1024 * 1024 * 1024, { into: "page" })), termsPart(terms())],
        400,
        "file_too_complex",
      ],
    ];
    for (const [what, parts, status, code] of cases) {
      const res = await upload(t(), key, parts);
      assert.equal(res.statusCode, status, `${what}: ${res.body}`);
      expectError(res, status, code);
    }
    const json = await t().call({ method: "POST", url: UPLOAD, key, payload: terms() });
    expectError(json, 415, "unsupported_media_type");
    assert.deepEqual(await uploadFootprint(t(), companyId), before);
  });

  it("refuses terms that fail validation, naming the field, writing nothing", async () => {
    const { key, companyId } = await t().newCompany();
    const before = await uploadFootprint(t(), companyId);
    const pdf = await plainPdf();
    const cases: Array<[Record<string, unknown>, string, string]> = [
      [terms({ contract_id: undefined }), "invalid_terms", "contract_id"],
      [terms({ contract_id: "" }), "invalid_terms", "contract_id"],
      [terms({ currency: "usd" }), "invalid_terms", "currency"],
      [terms({ currency: "XYZ" }), "invalid_terms", "currency"],
      [terms({ start_date: "2026-02-30" }), "invalid_terms", "start_date"],
      [terms({ end_date: "2025-12-31" }), "invalid_terms", "end_date"],
      [terms({ customer: {} }), "invalid_terms", "customer.name"],
      [
        terms({ customer: { id: "6f1c1d2e-0000-4000-8000-000000000000", name: "Both" } }),
        "invalid_terms",
        "customer.id",
      ],
      [terms({ customer: { name: "A", email: "not-an-email" } }), "invalid_terms", "customer.email"],
      [
        terms({ customer: { id: "6f1c1d2e-0000-4000-8000-000000000000", address: "1 Main St" } }),
        "invalid_terms",
        "customer.id",
      ],
      [terms({ rules: "none" }), "invalid_terms", "rules"],
      [terms({ rules: [{ type: "usage", metric: "x" }] }), "invalid_pricing_rule", "rules.0.amount"],
      [
        terms({
          rules: [
            { type: "usage", metric: "x", amount: "1" },
            { type: "minimum", amount: "-5" },
          ],
        }),
        "invalid_pricing_rule",
        "rules.1.amount",
      ],
      [
        terms({
          rules: [
            { id: "a", type: "usage", metric: "x", amount: "1" },
            { id: "a", type: "usage", metric: "y", amount: "1" },
          ],
        }),
        "invalid_pricing_rule",
        "rules.1.id",
      ],
      [
        terms({ rules: [{ type: "usage", metric: "x", amount: "1", currency: "USD" }] }),
        "invalid_pricing_rule",
        "rules.0.currency",
      ],
      [terms({ sample: true }), "invalid_terms", ""],
      [terms({ customer: { name: "Nul\u0000" } }), "invalid_request", "customer.name"],
    ];
    for (const [sent, code, path] of cases) {
      const res = await upload(t(), key, [filePart(pdf), termsPart(sent)]);
      const body = expectError(res, 400, code);
      assert.ok(
        body.details?.some((d) => d.path === path),
        `${JSON.stringify(sent)}: expected a detail at '${path}': ${res.body}`,
      );
    }
    assert.deepEqual(await uploadFootprint(t(), companyId), before);
  });

  it("answers 409 with the existing customer for a taken external_id, and 409 for a taken contract id, leaving neither half behind", async () => {
    const { key, companyId } = await t().newCompany();
    const existing = await createCustomer(t(), key, { name: "Initech", external_id: "initech" });
    const before = await uploadFootprint(t(), companyId);
    const taken = await upload(t(), key, [
      filePart(await plainPdf()),
      termsPart(terms({ customer: { name: "Initech again", external_id: "initech" } })),
    ]);
    const body = expectError(taken, 409, "customer_exists");
    assert.equal((body.customer as { id: string }).id, existing.id);
    assert.deepEqual(await uploadFootprint(t(), companyId), before);

    const first = await upload(t(), key, [
      filePart(await plainPdf()),
      termsPart(terms({ contract_id: "initech-2026", customer: { id: existing.id } })),
    ]);
    expectStatus(first, 201);
    const afterFirst = await uploadFootprint(t(), companyId);
    // A new customer and a taken contract id: the customer is not left behind.
    const again = await upload(t(), key, [
      filePart(await plainPdf()),
      termsPart(terms({ contract_id: "initech-2026" })),
    ]);
    const conflict = expectError(again, 409, "contract_exists");
    assert.equal((conflict.contract as { id: string }).id, "initech-2026");
    assert.deepEqual(await uploadFootprint(t(), companyId), afterFirst);
  });

  it("answers 404 for another company's customer, 401 without a key and 403 without contracts:write", async () => {
    const { key, companyId } = await t().newCompany();
    const other = await t().newCompany();
    const theirs = await createCustomer(t(), other.key, { name: "Not yours" });
    const before = await uploadFootprint(t(), companyId);
    expectError(
      await upload(t(), key, [filePart(await plainPdf()), termsPart(terms({ customer: { id: theirs.id } }))]),
      404,
      "not_found",
    );
    expectError(
      await upload(t(), key, [filePart(await plainPdf()), termsPart(terms({ customer: { id: "not-a-uuid" } }))]),
      404,
      "not_found",
    );
    expectError(await upload(t(), undefined, [filePart(await plainPdf()), termsPart(terms())]), 401);
    const readOnly = await keyWithScopes(t(), companyId, ["contracts:read", "customers:write"]);
    expectError(
      await upload(t(), readOnly, [filePart(await plainPdf()), termsPart(terms())]),
      403,
      "insufficient_scope",
    );
    assert.deepEqual(await uploadFootprint(t(), companyId), before);
  });

  it("reads each company's uploads in turn: past its cap a company is answered 429 too_many_uploads, and another company's upload goes before its queued bombs", async () => {
    const a = await t().newCompany();
    const b = await t().newCompany();
    const bomb = bombPdf(1024 * 1024 * 1024, { into: "page" });
    const answered: string[] = [];
    const send = (who: string, key: string, pdf: Buffer) =>
      upload(t(), key, [filePart(pdf), termsPart(terms())]).then((res) => {
        answered.push(who);
        return res;
      });
    // A sends one bomb more than a company may have checked or waiting: that one is refused at once, before
    // any bomb is done (each takes seconds), so it is the first answer.
    const bombs = Array.from({ length: PDF_QUEUE.perKey + 1 }, (_, i) => send(`A${i}`, a.key, bomb));
    const first = await Promise.race(bombs);
    const refused = expectError(first, 429, "too_many_uploads");
    assert.match(
      refused.error,
      /^Your company already has 2 uploaded files being checked; try this upload again in 5 seconds$/,
    );
    assert.equal(first.headers["retry-after"], "5");
    assert.equal(answered.length, 1, "nothing else was answered yet: A's bombs are queued");

    // B's valid upload is read beside A's first bomb, not after A's queue.
    const valid = await send("B", b.key, await plainPdf());
    expectStatus(valid, 201);
    const results = await Promise.all(bombs);
    assert.deepEqual(results.map((res) => res.statusCode).sort(), [400, 400, 429]);
    for (const res of results.filter((res) => res.statusCode === 400)) expectError(res, 400, "file_too_complex");
    const lastOfA = Math.max(...answered.flatMap((who, i) => (who.startsWith("A") ? [i] : [])));
    assert.ok(answered.indexOf("B") < lastOfA, `B was answered before A's queued bomb: ${answered.join(", ")}`);
  });

  it("lets exactly one of two parallel uploads of one contract id win", async () => {
    const { key, companyId } = await t().newCompany();
    const pdf = await plainPdf();
    // As many as a company may have checked at once (more would be refused 429 too_many_uploads).
    const results = await Promise.all(
      Array.from({ length: PDF_QUEUE.perKey }, (_, i) =>
        upload(t(), key, [
          filePart(pdf),
          termsPart(terms({ contract_id: "race-1", customer: { name: `Racer ${i}` } })),
        ]),
      ),
    );
    assert.deepEqual(results.map((r) => r.statusCode).sort(), [201, 409]);
    const after = await uploadFootprint(t(), companyId);
    assert.equal(after.contracts, 1);
    assert.equal(after.customers, 1, "the losers' new customers are rolled back");
    assert.equal(after.documents, 1);
  });
});
