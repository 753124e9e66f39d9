// POST /v1/billing/contracts/extract (docs/api.md, "Reading an agreement"): the terms an agreement proposes,
// each value with the page and text it came from, the file checked as an upload's is, and nothing stored.
import assert from "node:assert/strict";
import { it } from "node:test";
import { CONTRACTS, keyWithScopes } from "../support/api.js";
import { ocrLoad } from "../../src/platform/pdf-ocr.js";
import { expectError, expectStatus, waitFor } from "../support/assertions.js";
import { noisePage, proseAgreement, storedScan } from "../support/agreement-files.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import {
  generatedAgreement,
  type MultipartPart,
  multipart,
  pagesPdf,
  plainPdf,
  uploadFootprint,
} from "../support/uploads.js";

const EXTRACT = `${CONTRACTS}/extract`;

async function extract(t: TestApp, key: string | undefined, parts: MultipartPart[]) {
  const body = await multipart(parts);
  return t.call({
    method: "POST",
    url: EXTRACT,
    ...(key ? { key } : {}),
    payload: body.payload,
    headers: body.headers,
  });
}

const filePart = (value: Buffer, filename = "agreement.pdf"): MultipartPart => ({
  name: "file",
  value,
  filename,
  type: "application/pdf",
});

describeEachEngine("contract extraction (API)", (t) => {
  it("proposes the terms of a prose agreement, each value with its page and source text, and stores nothing", async () => {
    const { key, companyId } = await t().newCompany();
    expectStatus(
      await t().call({
        method: "PATCH",
        url: "/v1/billing/account",
        key,
        payload: { legal_name: "Northwind Payments Ltd" },
      }),
      200,
    );
    const before = await uploadFootprint(t(), companyId);
    const res = await extract(t(), key, [filePart(await proseAgreement())]);
    expectStatus(res, 200);
    const body = res.json();
    assert.equal(body.object, "contract_extraction");
    assert.deepEqual(body.terms.customer, {
      name: "Harbor Freight Logistics Inc.",
      address: "400 Pier Avenue, Suite 12, Oakland, CA 94607",
      email: "ap@harborfreight-logistics.example",
    });
    assert.equal(body.terms.contract_id, "MSA-2026-0142");
    assert.equal(body.terms.start_date, "2026-01-05");
    assert.equal(body.terms.end_date, "2027-01-04");
    assert.equal(body.terms.currency, "USD");
    assert.equal(body.terms.payment_terms_days, 15);
    assert.deepEqual(
      body.terms.rules.map((r: { name: string; amount?: string; rate?: string; monthly_cap?: string }) => [
        r.name,
        r.amount ?? r.rate,
        r.monthly_cap ?? null,
      ]),
      [
        ["Monthly minimum", "1500.00", null],
        ["Platform fee", "250.00", null],
        ["Card volume", "0.0235", "4000"],
        ["ACH debit", "0.28", null],
        ["International wire", "18.00", null],
      ],
    );
    assert.equal(body.terms.rules[4].counterparty, "HSBC UK");
    const cap = body.fields.find((f: { field: string }) => f.field === "rules.2.monthly_cap");
    assert.equal(cap.page, 2);
    assert.match(cap.source_text, /capped at \$4,000 per month/);
    const terms = body.fields.find((f: { field: string }) => f.field === "payment_terms_days");
    assert.deepEqual([terms.page, terms.value], [2, 15]);
    assert.match(terms.source_text, /within fifteen \(15\) days/);
    assert.deepEqual(body.warnings, []);
    assert.deepEqual(await uploadFootprint(t(), companyId), before);
  });

  it("proposes terms the upload takes as they are", async () => {
    const { key } = await t().newCompany();
    const res = await extract(t(), key, [filePart(await generatedAgreement())]);
    expectStatus(res, 200);
    const { terms } = res.json();
    assert.ok(terms.customer?.name, "the customer is read from the service's own agreement");
    const { payload, headers } = await multipart([
      filePart(await generatedAgreement()),
      { name: "terms", value: JSON.stringify({ ...terms, contract_id: "from-extraction" }) },
    ]);
    expectStatus(await t().call({ method: "POST", url: `${CONTRACTS}/upload`, key, payload, headers }), 201);
  });

  it("says when nothing was found, and answers a PDF without a single word with a warning, not an error", async () => {
    const { key } = await t().newCompany();
    const words = await extract(t(), key, [filePart(await plainPdf(["Minutes of the board meeting."]))]);
    expectStatus(words, 200);
    assert.deepEqual(words.json().terms, {});
    assert.deepEqual(
      words.json().warnings.map((w: { code: string }) => w.code),
      ["nothing_found"],
    );
    const blank = await extract(t(), key, [filePart(await plainPdf([]))]);
    expectStatus(blank, 200);
    assert.deepEqual(
      blank.json().warnings.map((w: { code: string }) => w.code),
      ["no_text"],
    );
  });

  it("reads a scanned agreement by OCR and says so; a page of noise has no text; a long file is read in part", async () => {
    const { key } = await t().newCompany();
    expectStatus(
      await t().call({
        method: "PATCH",
        url: "/v1/billing/account",
        key,
        payload: { legal_name: "Northwind Payments Ltd" },
      }),
      200,
    );
    const scan = storedScan("prose-200dpi");
    const scanned = await extract(t(), key, [filePart(scan, "scan.pdf")]);
    expectStatus(scanned, 200);
    const body = scanned.json();
    assert.equal(body.terms.customer.name, "Harbor Freight Logistics Inc.");
    assert.equal(body.terms.contract_id, "MSA-2026-0142");
    assert.equal(body.terms.payment_terms_days, 15);
    assert.deepEqual(
      body.warnings.map((w: { code: string; pages?: number[] }) => [w.code, w.pages]),
      [["ocr", [1, 2, 3]]],
    );
    assert.match(body.warnings[0].message, /^Pages 1–3 have no text layer and were read by OCR/);
    // Read by OCR, no value is as sure as one read from a text layer.
    assert.ok(body.fields.every((f: { confidence: number }) => f.confidence < 0.95));

    const noise = await extract(t(), key, [filePart(await noisePage(), "noise.pdf")]);
    expectStatus(noise, 200);
    assert.deepEqual(
      noise.json().warnings.map((w: { code: string }) => w.code),
      ["no_text"],
    );

    const long = await pagesPdf(500);
    const pages = await extract(t(), key, [filePart(long)]);
    expectStatus(pages, 200);
    assert.ok(pages.json().warnings.some((w: { code: string }) => w.code === "pages_skipped"));
  });

  it("reads a company's scan behind another company's 10 scan bombs: its terms, not ocr_busy", async () => {
    const a = await t().newCompany();
    const b = await t().newCompany();
    expectStatus(
      await t().call({
        method: "PATCH",
        url: "/v1/billing/account",
        key: b.key,
        payload: { legal_name: "Northwind Payments Ltd" },
      }),
      200,
    );
    // Five pages of noise each: every page is drawn and looked at by OCR, and none has a word.
    const bomb = await noisePage(3, 5);
    const bombs = Array.from({ length: 10 }, () => extract(t(), a.key, [filePart(bomb, "noise.pdf")]));
    await waitFor("A's scans are being read by OCR", () => ocrLoad().running > 0);
    const scan = storedScan("prose-200dpi");
    const res = await extract(t(), b.key, [filePart(scan, "scan.pdf")]);
    expectStatus(res, 200);
    const body = res.json();
    assert.deepEqual(
      body.warnings.map((w: { code: string; pages?: number[] }) => [w.code, w.pages]),
      [["ocr", [1, 2, 3]]],
    );
    assert.equal(body.terms.customer.name, "Harbor Freight Logistics Inc.");
    assert.equal(body.terms.payment_terms_days, 15);
    // A is the one refused past its own bounds: as uploads (429), or its scans' pages left unread with when to
    // try again; what A had read has no words.
    const answers = await Promise.all(bombs);
    let read = 0;
    for (const answer of answers) {
      if (answer.statusCode === 429) {
        expectError(answer, 429, "too_many_uploads");
        continue;
      }
      expectStatus(answer, 200);
      for (const warning of answer.json().warnings as Array<{ code: string; message: string }>) {
        assert.ok(["no_text", "ocr_busy"].includes(warning.code), warning.code);
        if (warning.code === "ocr_busy") assert.match(warning.message, /Send the file again in \d+ seconds\.$/);
        else read++;
      }
    }
    assert.ok(read > 0, "A's first scan was read");
  });

  it("refuses what is not a readable PDF as the upload does, and a body that is not one file", async () => {
    const { key } = await t().newCompany();
    const cases: Array<[string, MultipartPart[], number, string]> = [
      ["empty", [filePart(Buffer.alloc(0))], 400, "file_empty"],
      ["not a PDF", [filePart(Buffer.from("hello"))], 415, "file_not_pdf"],
      [
        "encrypted",
        [filePart(await plainPdf(["secret"], { userPassword: "open", ownerPassword: "owner" }))],
        400,
        "file_encrypted",
      ],
      ["damaged", [filePart(Buffer.from("%PDF-1.7\n1 0 obj broken"))], 400, "file_unreadable"],
      [
        "over 10 MiB",
        [filePart(Buffer.concat([Buffer.from("%PDF-1.4\n"), Buffer.alloc(10 * 1024 * 1024)]))],
        413,
        "file_too_large",
      ],
      ["no file", [{ name: "note", value: "x" }], 400, "invalid_request"],
      ["a part besides the file", [filePart(await plainPdf()), { name: "terms", value: "{}" }], 400, "invalid_request"],
    ];
    for (const [what, parts, status, code] of cases) {
      const res = await extract(t(), key, parts);
      assert.equal(res.statusCode, status, what);
      expectError(res, status, code);
    }
    const json = await t().call({ method: "POST", url: EXTRACT, key, payload: { file: "x" } });
    expectError(json, 415, "unsupported_media_type");
  });

  it("needs a key with contracts:write", async () => {
    const { companyId } = await t().newCompany();
    const pdf = await plainPdf();
    expectError(await extract(t(), undefined, [filePart(pdf)]), 401, "missing_api_key");
    const reader = await keyWithScopes(t(), companyId, ["contracts:read"]);
    expectError(await extract(t(), reader, [filePart(pdf)]), 403, "insufficient_scope");
  });
});
