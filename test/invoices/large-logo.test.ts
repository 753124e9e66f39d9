/**
 * A large logo made small once (docs/api.md, "Account", the logo), on both engines: a 4000 × 4000 RGBA PNG of
 * about 70 KB passes the checks, is scaled to 224 × 224 in the document processes and stored so; GET …/logo
 * answers that image, and every invoice PDF embeds it, never the original. A large logo stored before logos were
 * made small (the account's, and the one an issued invoice was issued with) is made small the first time a
 * document prints it, and stored so: the issued invoice keeps printing its own logo.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { it } from "node:test";
import {
  INVOICES,
  createCustomer,
  createSampleContract,
  invoiceFor,
  submitAccepted,
  usageEvent,
} from "../support/api.js";
import { expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { largeRgbaPng, pngSize } from "../support/images.js";

const LOGO = "/v1/billing/account/logo";
const MARCH_1 = new Date("2026-03-01T08:00:00.000Z");
const ISSUE_DAY = new Date("2026-04-06T09:30:00.000Z");
const large = largeRgbaPng(4000, 4000);
const sha256 = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");

/** The sizes of the images a PDF embeds (its image XObjects' /Width and /Height). */
function embeddedImages(pdf: Buffer): string[] {
  const text = pdf.toString("latin1");
  return [...text.matchAll(/\/Subtype \/Image[^>]*?\/Width (\d+)[^>]*?\/Height (\d+)/g)].map((m) => `${m[1]}x${m[2]}`);
}

async function draftOf(t: TestApp, key: string) {
  t.clock.set(MARCH_1);
  const customer = await createCustomer(t, key, { name: "Globex Corporation" });
  const contract = await createSampleContract(t, key, customer.id);
  await submitAccepted(t, key, [usageEvent(contract.id, { quantity: 4 })]);
  return (await invoiceFor(t, key, contract.id)).number as string;
}

const pdfOf = async (t: TestApp, key: string, number: string) => {
  const res = await t.call({ method: "GET", url: `${INVOICES}/${encodeURIComponent(number)}/pdf`, key });
  expectStatus(res, 200);
  return res.rawPayload;
};

/** Stores a logo as the service did before logos were made small at upload. */
async function storeUnscaled(t: TestApp, companyId: string, bytes: Buffer) {
  await t.app.db.query(
    `INSERT INTO company_logos (company_id, content_type, bytes, sha256, updated_at) VALUES ($1, 'image/png', $2, $3, now())
     ON CONFLICT (company_id) DO UPDATE SET bytes = EXCLUDED.bytes, sha256 = EXCLUDED.sha256`,
    [companyId, bytes, sha256(bytes)],
  );
}

describeEachEngine("large logo", (test) => {
  it("accepts a 4000 × 4000 PNG of 70 KB, stores it at 224 × 224, and every invoice PDF embeds the small image", async () => {
    const t = test();
    assert.ok(large.length < 100_000, `the test image is small on the wire (${large.length} bytes)`);
    const { key } = await t.newCompany();
    const put = await t.call({
      method: "PUT",
      url: LOGO,
      key,
      payload: large,
      headers: { "content-type": "image/png" },
    });
    expectStatus(put, 200);
    const logo = put.json().logo;
    assert.equal(logo.content_type, "image/png");
    assert.deepEqual({ width: logo.width, height: logo.height }, { width: 224, height: 224 });

    const stored = await t.call({ method: "GET", url: LOGO, key });
    expectStatus(stored, 200);
    assert.equal(stored.headers["content-type"], "image/png");
    assert.deepEqual(pngSize(stored.rawPayload), { width: 224, height: 224 });
    assert.equal(logo.size, stored.rawPayload.length);
    assert.equal(logo.sha256, sha256(stored.rawPayload), "the account names the stored image");

    const number = await draftOf(t, key);
    const pdf = await pdfOf(t, key, number);
    const images = embeddedImages(pdf);
    assert.ok(images.length > 0, "the PDF embeds the logo");
    assert.ok(
      images.every((size) => size === "224x224"),
      `only the small image is embedded: ${images.join(", ")}`,
    );
    assert.ok((await pdfOf(t, key, number)).equals(pdf), "the same bytes each time");
  });

  it("keeps a logo that fits as it was sent, and a wide one at most 600 pixels wide, its proportions kept", async () => {
    const t = test();
    const { key } = await t.newCompany();
    const wide = largeRgbaPng(3000, 500);
    const put = await t.call({
      method: "PUT",
      url: LOGO,
      key,
      payload: wide,
      headers: { "content-type": "image/png" },
    });
    expectStatus(put, 200);
    assert.deepEqual({ width: put.json().logo.width, height: put.json().logo.height }, { width: 600, height: 100 });
    const small = largeRgbaPng(300, 100);
    const kept = await t.call({
      method: "PUT",
      url: LOGO,
      key,
      payload: small,
      headers: { "content-type": "image/png" },
    });
    expectStatus(kept, 200);
    assert.ok((await t.call({ method: "GET", url: LOGO, key })).rawPayload.equals(small), "byte for byte");
  });

  it("makes a large logo stored before this change small the first time a document prints it: the account's and an issued invoice's", async () => {
    const t = test();
    const { key, companyId } = await t.newCompany();
    await storeUnscaled(t, companyId, large);
    const number = await draftOf(t, key);
    t.clock.set(ISSUE_DAY);
    expectStatus(await t.call({ method: "POST", url: `${INVOICES}/${encodeURIComponent(number)}/finalize`, key }), 200);
    // Issued with the large logo: invoice_logos keeps it under its SHA-256.
    const issuedLogo = async () =>
      (
        await t.app.db.query<{ bytes: Buffer }>(
          "SELECT bytes FROM invoice_logos WHERE company_id = $1 AND sha256 = $2",
          [companyId, sha256(large)],
        )
      ).rows[0]!.bytes;
    assert.deepEqual(pngSize(Buffer.from(await issuedLogo())), { width: 4000, height: 4000 });

    const pdf = await pdfOf(t, key, number);
    assert.deepEqual([...new Set(embeddedImages(pdf))], ["224x224"]);
    assert.deepEqual(pngSize(Buffer.from(await issuedLogo())), { width: 224, height: 224 }, "stored small, same name");
    assert.ok((await pdfOf(t, key, number)).equals(pdf), "the issued invoice prints the same logo each time");

    // A draft prints the account's logo: made small on its first document, and stored so.
    assert.equal((await t.call({ method: "GET", url: "/v1/billing/account", key })).json().logo.width, 4000);
    const second = await draftOf(t, key);
    assert.deepEqual([...new Set(embeddedImages(await pdfOf(t, key, second)))], ["224x224"]);
    const account = (await t.call({ method: "GET", url: "/v1/billing/account", key })).json();
    assert.deepEqual({ width: account.logo.width, height: account.logo.height }, { width: 224, height: 224 });
  });
});
