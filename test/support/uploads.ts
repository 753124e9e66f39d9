/**
 * What contract-upload tests send: multipart bodies built by the platform's own FormData (as a browser or
 * fetch would), and PDFs of every kind a user might upload (a generated agreement, a plain one, encrypted ones).
 */
import assert from "node:assert/strict";
import zlib from "node:zlib";
import PDFDocument from "pdfkit";
import { renderAgreementPdf, type AgreementPdfInput } from "../../src/domain/contracts/agreement-pdf.js";
import { agreementInput } from "../fixtures/agreement-input.js";
import { eventCount } from "./api.js";
import type { TestApp } from "./harness.js";

export interface MultipartPart {
  name: string;
  value: string | Buffer;
  filename?: string;
  type?: string;
}

/** A multipart/form-data body and its content-type (with the boundary), from FormData. */
export async function multipart(
  parts: readonly MultipartPart[],
): Promise<{ payload: Buffer; headers: Record<string, string> }> {
  const form = new FormData();
  for (const part of parts) {
    if (typeof part.value === "string" && part.filename === undefined) form.append(part.name, part.value);
    else
      form.append(
        part.name,
        new Blob([typeof part.value === "string" ? part.value : new Uint8Array(part.value)], {
          type: part.type ?? "application/pdf",
        }),
        part.filename ?? "file.pdf",
      );
  }
  const request = new Request("http://localhost/", { method: "POST", body: form });
  return {
    payload: Buffer.from(await request.arrayBuffer()),
    headers: { "content-type": request.headers.get("content-type")! },
  };
}

/**
 * How a stored, uploaded PDF is served, by the API and the dashboard: offered for download only, and in a
 * sandbox with nothing allowed were a browser to show it anyway.
 */
export function assertServedAsUpload(
  res: { statusCode: number; headers: Record<string, unknown> },
  filename: string,
): void {
  assert.equal(res.statusCode, 200);
  assert.equal(res.headers["content-type"], "application/pdf");
  assert.equal(res.headers["content-disposition"], `attachment; filename="${filename}"`);
  assert.equal(res.headers["content-security-policy"], "sandbox; default-src 'none'");
  assert.equal(res.headers["x-content-type-options"], "nosniff");
}

/** A PDF made by pdfkit with these lines of text; `encryption` adds a password. */
export function plainPdf(
  lines: readonly string[] = ["Master services agreement", "Signed by both parties."],
  encryption: Record<string, unknown> = {},
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ ...encryption, info: { CreationDate: new Date(0) } });
    const chunks: Buffer[] = [];
    doc.on("data", (chunk: Buffer) => chunks.push(chunk));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
    for (const line of lines) doc.text(line);
    doc.end();
  });
}

/** One of the service's own agreements, as the agreement link would serve it. */
export function generatedAgreement(overrides: Partial<AgreementPdfInput> = {}): Promise<Buffer> {
  return renderAgreementPdf(
    agreementInput({
      companyName: "Seller Ltd",
      customerName: "Acme Europe GmbH",
      contractId: "acme-eu-2026",
      contractNumber: "CN-000042",
      currency: "EUR",
      rules: [
        {
          id: "r1",
          name: "SEPA transfer",
          type: "usage",
          model: "flat",
          amount: "0.25",
          metric: "sepa_transfer",
          monthly_cap: "500.00",
          currency: "EUR",
        },
        {
          id: "r2",
          name: "Card payments",
          type: "usage",
          model: "percentage",
          rate: "0.029",
          metric: "card_payment",
          currency: "EUR",
        },
        {
          id: "r3",
          name: "Platform fee",
          type: "subscription",
          model: "flat",
          amount: "99.00",
          frequency: "monthly",
          currency: "EUR",
        },
        {
          id: "r4",
          name: "Monthly minimum",
          type: "minimum",
          model: "flat",
          amount: "1000.00",
          frequency: "monthly",
          currency: "EUR",
        },
      ],
      minimumAmount: "1000.00",
      generatedAt: new Date("2026-01-01T00:00:00Z"),
      ...overrides,
    }),
  );
}

/**
 * A contract upload's terms for a new customer, with a rule of each kind (two usage, a subscription, a monthly
 * minimum); the customer's external id and the contract id are new each call. `overrides` replace top-level fields.
 */
export function uploadTerms(overrides: Record<string, unknown> = {}): Record<string, unknown> {
  const unique = Math.random().toString(16).slice(2);
  return {
    customer: { name: "Acme Europe GmbH", external_id: `acme-${unique}`, email: "ap@acme.example" },
    contract_id: `acme-eu-${unique}`,
    start_date: "2026-01-01",
    end_date: "2026-12-31",
    currency: "EUR",
    rules: [
      {
        name: "SEPA transfer",
        type: "usage",
        model: "flat",
        metric: "sepa_transfer",
        amount: "0.25",
        monthly_cap: "500",
      },
      { name: "Card payments", type: "usage", model: "percentage", metric: "card_payment", rate: 0.029 },
      { name: "Platform fee", type: "subscription", model: "flat", amount: "99" },
      { name: "Monthly minimum", type: "minimum", model: "flat", amount: "1000" },
    ],
    ...overrides,
  };
}

/**
 * A small, valid PDF with one stream that unpacks into `unpackedBytes` of spaces (a "zip bomb"): a reader that
 * unpacks it whole needs that much memory. The stream is the document's metadata (read when the file is
 * opened) or, `into: "page"`, its page's content (read only with the page: a "content bomb"). Built without
 * deflating it all: one megabyte deflated once, its blocks repeated (deflate.ts below).
 */
export function bombPdf(unpackedBytes: number, { into = "metadata" }: { into?: "metadata" | "page" } = {}): Buffer {
  const data = repeatedDeflate(0x20, 1024 * 1024, Math.max(1, Math.ceil(unpackedBytes / (1024 * 1024))));
  const objects = [
    `<< /Type /Catalog /Pages 2 0 R${into === "metadata" ? " /Metadata 4 0 R" : ""} >>`,
    "<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792]${into === "page" ? " /Contents 4 0 R" : ""} >>`,
  ];
  const parts: Buffer[] = [Buffer.from("%PDF-1.7\n")];
  const offsets: number[] = [];
  const length = () => parts.reduce((sum, part) => sum + part.length, 0);
  objects.forEach((body, i) => {
    offsets.push(length());
    parts.push(Buffer.from(`${i + 1} 0 obj\n${body}\nendobj\n`));
  });
  offsets.push(length());
  const kind = into === "metadata" ? "/Type /Metadata /Subtype /XML " : "";
  parts.push(
    Buffer.from(`4 0 obj\n<< ${kind}/Filter /FlateDecode /Length ${data.length} >>\nstream\n`),
    data,
    Buffer.from("\nendstream\nendobj\n"),
  );
  const xref = length();
  parts.push(
    Buffer.from(
      `xref\n0 5\n0000000000 65535 f \n${offsets.map((o) => `${String(o).padStart(10, "0")} 00000 n \n`).join("")}trailer\n<< /Size 5 /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`,
    ),
  );
  return Buffer.concat(parts);
}

/**
 * A zlib stream (RFC 1950) of `count` chunks of `chunkBytes` bytes all `byte`: the chunk is deflated once with
 * a full flush, which ends its blocks on a byte and forgets the history, so the same bytes stand for every
 * chunk; then an empty final block and the Adler-32 of the whole, computed in closed form per chunk.
 */
function repeatedDeflate(byte: number, chunkBytes: number, count: number): Buffer {
  const block = zlib.deflateRawSync(Buffer.alloc(chunkBytes, byte), {
    level: 9,
    finishFlush: zlib.constants.Z_FULL_FLUSH,
  });
  const MOD = 65521n;
  let a = 1n;
  let b = 0n;
  const n = BigInt(chunkBytes);
  const v = BigInt(byte);
  for (let i = 0; i < count; i++) {
    // After n more bytes of value v: b gains n·a plus v·(1 + 2 + … + n), a gains n·v.
    b = (b + n * a + (v * n * (n + 1n)) / 2n) % MOD;
    a = (a + n * v) % MOD;
  }
  const trailer = Buffer.alloc(4);
  trailer.writeUInt32BE(Number((b << 16n) | a));
  // 0x78 0xda: deflate, 32 KiB window, best compression; 0x03 0x00: an empty final block (fixed codes).
  return Buffer.concat([
    Buffer.from([0x78, 0xda]),
    ...Array.from({ length: count }, () => block),
    Buffer.from([0x03, 0x00]),
    trailer,
  ]);
}

/** The rows an upload writes, counted: what a refused upload, or an extraction, must leave as it was. */
export async function uploadFootprint(t: TestApp, companyId: string) {
  const count = async (table: string) =>
    (await t.app.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} WHERE company_id = $1`, [companyId]))
      .rows[0]!.n;
  return {
    customers: await count("customers"),
    contracts: await count("contracts"),
    documents: await count("contract_documents"),
    events: await eventCount(t, companyId),
  };
}

/** A PDF of `count` pages, each with one line of text. */
export function pagesPdf(count: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({ info: { CreationDate: new Date(0) } });
    const chunks: Buffer[] = [];
    doc.on("data", (chunk: Buffer) => chunks.push(chunk));
    doc.on("end", () => resolve(Buffer.concat(chunks)));
    doc.on("error", reject);
    for (let page = 1; page <= count; page++) {
      if (page > 1) doc.addPage();
      doc.text(`Page ${page} of the schedules.`);
    }
    doc.end();
  });
}
