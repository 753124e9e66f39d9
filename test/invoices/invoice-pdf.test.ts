/**
 * GET /v1/billing/invoices/{number}/pdf on both engines: the invoice as the customer receives it, a draft
 * marked DRAFT until it is issued, the figures those of GET, the seller's profile and the customer's details
 * (as they were when it was issued, logo included), the same bytes at every download; another company's
 * invoice and bad credentials refused.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { deflateSync } from "node:zlib";
import {
  INVOICES,
  addRule,
  createCustomer,
  createSampleContract,
  invoiceFor,
  keyWithScopes,
  submitAccepted,
  usageEvent,
} from "../support/api.js";
import { expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine } from "../support/harness.js";
import { pdfText } from "../support/pdf-text.js";

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});
const crc32 = (bytes: Buffer): number => {
  let c = 0xffffffff;
  for (const b of bytes) c = CRC_TABLE[(c ^ b) & 0xff]! ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
};
const chunk = (type: string, data: Buffer): Buffer => {
  const body = Buffer.concat([Buffer.from(type, "latin1"), data]);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body));
  return Buffer.concat([length, body, crc]);
};
/** A 1×1 PNG (8-bit RGB, not interlaced) of one colour: two colours, two logos. */
function png(rgb: [number, number, number]): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(1, 0);
  ihdr.writeUInt32BE(1, 4);
  ihdr.set([8, 2, 0, 0, 0], 8);
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk("IHDR", ihdr),
    chunk("IDAT", deflateSync(Buffer.from([0, ...rgb]))),
    chunk("IEND", Buffer.alloc(0)),
  ]);
}

const mediaBox = (pdf: Buffer) =>
  pdf
    .toString("latin1")
    .match(/\/MediaBox \[([^\]]+)\]/)?.[1]
    ?.trim();

describeEachEngine("invoice PDF", (t) => {
  it("answers the invoice as a PDF: seller, customer, lines and total, DRAFT until issued, the same bytes each time, as issued after later edits", async () => {
    t().clock.set(new Date("2026-03-02T09:00:00.000Z"));
    const { key, companyId } = await t().newCompany({ name: "Northwind Payments" });
    const account = (payload: Record<string, unknown>) =>
      t().call({ method: "PATCH", url: "/v1/billing/account", key, payload });
    expectStatus(
      await account({
        legal_name: "Northwind Payments Ltd",
        address: "1 Harbour Road\nDublin D02 X285",
        tax_id: "IE1234567T",
        payment_instructions: "SEPA transfer to IE29 AIBK 9311 5212 3456 78",
        invoice_footer: "Registered in Ireland no. 123456",
        paper_size: "a4",
      }),
      200,
    );
    const logo = (bytes: Buffer) =>
      t().call({
        method: "PUT",
        url: "/v1/billing/account/logo",
        key,
        headers: { "content-type": "image/png" },
        payload: bytes,
      });
    expectStatus(await logo(png([31, 58, 95])), 200);
    const customer = await createCustomer(t(), key, {
      name: "Globex GmbH",
      address: "Hauptstraße 1\n10115 Berlin",
      country: "Germany",
      email: "billing@globex.example",
      tax_id: "DE123456789",
      invoice_memo: "PO 4500012345",
      payment_terms_days: 14,
    });
    const contract = await createSampleContract(t(), key, customer.id);
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 60 })]);
    const { number } = await invoiceFor(t(), key, contract.id);
    const pdf = async () => {
      const res = await t().call({ method: "GET", url: `${INVOICES}/${number}/pdf`, key });
      expectStatus(res, 200);
      assert.equal(res.headers["content-type"], "application/pdf");
      assert.equal(res.headers["content-disposition"], `inline; filename="${number}.pdf"`);
      assert.equal(res.rawPayload.subarray(0, 5).toString(), "%PDF-");
      return res.rawPayload;
    };
    const draft = await pdf();
    t().clock.set(new Date("2026-03-02T09:05:00.000Z"));
    assert.ok(draft.equals(await pdf()), "a draft downloaded twice: the same bytes");
    assert.equal(mediaBox(draft), "0 0 595.28 841.89", "A4, as the profile says");
    const draftText = await pdfText(draft);
    for (const words of [
      "DRAFT: not final",
      `Invoice ${number}`,
      "Northwind Payments Ltd",
      "1 Harbour Road",
      "Tax ID: IE1234567T",
      "Globex GmbH",
      "10115 Berlin",
      "Germany",
      "billing@globex.example",
      "Tax ID: DE123456789",
      "PO 4500012345",
      "SEPA transfer to IE29",
      "Registered in Ireland",
      "Domestic wire",
      "$1,200.00",
    ]) {
      assert.ok(draftText.includes(words), `${words}\n${draftText}`);
    }
    t().clock.set(new Date("2026-04-03T10:00:00.000Z"));
    expectStatus(await t().call({ method: "POST", url: `${INVOICES}/${number}/finalize`, key }), 200);
    const issued = await pdf();
    const text = await pdfText(issued);
    assert.doesNotMatch(text, /DRAFT/);
    assert.ok(text.includes("Due April 17, 2026 (Net 14)"), text);
    assert.ok(text.includes("Amount due as of April 3, 2026"), text);
    assert.ok(text.includes("$1,200.00"), text);
    assert.match(issued.toString("latin1"), /\/Subtype \/Image/, "the logo is printed");

    // Later edits of the account, its logo and the customer leave the issued invoice's document as it was.
    t().clock.set(new Date("2026-04-05T10:00:00.000Z"));
    expectStatus(await account({ legal_name: "Renamed Ltd", address: "Elsewhere", paper_size: "letter" }), 200);
    expectStatus(await logo(png([200, 30, 30])), 200);
    expectStatus(
      await t().call({
        method: "PATCH",
        url: `/v1/billing/customers/${customer.id}`,
        key,
        payload: { address: "Neue Straße 9\n80331 München", tax_id: "DE999999999", invoice_memo: "PO 1" },
      }),
      200,
    );
    assert.ok(issued.equals(await pdf()), "an issued invoice's PDF never changes: the same bytes after the edits");

    // Void: it says so, and that nothing is due.
    expectStatus(await t().call({ method: "POST", url: `${INVOICES}/${number}/void`, key }), 200);
    const voided = await pdfText(await pdf());
    for (const words of ["VOID", "Nothing is due", "Northwind Payments Ltd"])
      assert.ok(voided.includes(words), `${words}\n${voided}`);
    assert.doesNotMatch(voided, /Total due/);

    const other = await t().newCompany();
    expectError(await t().call({ method: "GET", url: `${INVOICES}/${number}/pdf`, key: other.key }), 404, "not_found");
    expectError(await t().call({ method: "GET", url: `${INVOICES}/INV-999999/pdf`, key }), 404, "not_found");
    expectError(await t().call({ method: "GET", url: `${INVOICES}/${number}/pdf` }), 401);
    expectError(
      await t().call({
        method: "GET",
        url: `${INVOICES}/${number}/pdf`,
        key: await keyWithScopes(t(), companyId, ["usage:read"]),
      }),
      403,
    );
  });

  it("names a usage line after its rule, and explains a monthly cap on its line", async () => {
    t().clock.set(new Date("2026-03-02T09:00:00.000Z"));
    const { key } = await t().newCompany({ name: "Northwind Payments" });
    const customer = await createCustomer(t(), key, { name: "Initech" });
    const contract = await createSampleContract(t(), key, customer.id);
    await addRule(t(), key, contract.id, {
      name: "Card processing",
      metric: "card_volume",
      rate: "0.0235",
      monthly_cap: "4000.00",
    });
    await submitAccepted(t(), key, [usageEvent(contract.id, { metric: "card_volume", quantity: 192650.55 })]);
    const invoice = await invoiceFor(t(), key, contract.id);
    const line = invoice.line_items.find((l: { description: string }) => l.description === "Card processing");
    assert.ok(line, JSON.stringify(invoice.line_items));
    const res = await t().call({ method: "GET", url: `${INVOICES}/${invoice.number}/pdf`, key });
    expectStatus(res, 200);
    // The note wraps within the description column: read as one run of words.
    const text = (await pdfText(res.rawPayload)).replace(/\u00a0/g, " ").replace(/\s+/g, " ");
    for (const words of [
      "Card processing",
      "2.35%",
      "$192,650.55",
      "capped at the monthly cap of $4,000.00; uncapped $4,527.29",
    ])
      assert.ok(text.includes(words), `${words}\n${text}`);
  });
});
