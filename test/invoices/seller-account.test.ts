/**
 * The seller's profile (GET/PATCH /v1/billing/account) and its logo (PUT/GET/DELETE …/account/logo), on both
 * engines: defaults, changes read back, null clearing, refusals, scopes, and images checked whole: a real PNG
 * and JPEG kept byte for byte; a damaged, cut or fake image refused before it is stored.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { it } from "node:test";
import { keyWithScopes } from "../support/api.js";
import { JPEG_16, pngImage } from "../support/images.js";
import { expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";

const ACCOUNT = "/v1/billing/account";
const LOGO = `${ACCOUNT}/logo`;

const putLogo = (t: TestApp, key: string | undefined, body: Buffer | string, type: string) =>
  t.call({
    method: "PUT",
    url: LOGO,
    ...(key ? { key } : {}),
    payload: body,
    headers: { "content-type": type },
  });

const patchAccount = (t: TestApp, key: string, payload: unknown) =>
  t.call({ method: "PATCH", url: ACCOUNT, key, payload: payload as object });

const getAccount = (t: TestApp, key: string) => t.call({ method: "GET", url: ACCOUNT, key });

const sha256 = (bytes: Buffer) => createHash("sha256").update(bytes).digest("hex");

describeEachEngine("seller account (profile and logo)", (t) => {
  it("answers the defaults: letter paper, Net 30, no logo, every profile field null", async () => {
    const { key, companyId } = await t().newCompany({ name: "Seller Defaults Ltd" });
    const res = await getAccount(t(), key);
    expectStatus(res, 200);
    assert.deepEqual(res.json(), {
      object: "account",
      id: companyId,
      name: "Seller Defaults Ltd",
      legal_name: null,
      address: null,
      tax_id: null,
      payment_instructions: null,
      invoice_footer: null,
      paper_size: "letter",
      locale: "en-US",
      payment_terms_days: 30,
      reminder_days: [-3, 1, 7],
      logo: null,
      updated_at: res.json().updated_at,
    });
    expectError(await t().call({ method: "GET", url: LOGO, key }), 404, "not_found");
  });

  it("changes the profile, reads it back, and clears fields with null", async () => {
    const { key } = await t().newCompany();
    const profile = {
      legal_name: "Seller GmbH",
      address: "Hauptstraße 1\n10115 Berlin\nGermany",
      tax_id: "DE999999999",
      payment_instructions: "IBAN DE89 3704 0044 0532 0130 00\nBIC COBADEFFXXX",
      invoice_footer: "Thank you for your business.",
      paper_size: "a4",
      locale: "de-DE",
      payment_terms_days: 14,
    };
    const res = await patchAccount(t(), key, { ...profile, legal_name: "  Seller GmbH  " });
    expectStatus(res, 200);
    assert.deepEqual(
      { ...(res.json() as object), object: undefined, id: undefined, name: undefined, logo: undefined },
      {
        ...profile,
        reminder_days: [-3, 1, 7],
        object: undefined,
        id: undefined,
        name: undefined,
        logo: undefined,
        updated_at: t().clock.now().toISOString(),
      },
    );
    assert.deepEqual((await getAccount(t(), key)).json(), res.json());

    const unchanged = await patchAccount(t(), key, {});
    expectStatus(unchanged, 200);
    assert.deepEqual(unchanged.json(), res.json(), "an empty body changes nothing");

    const cleared = await patchAccount(t(), key, {
      legal_name: null,
      address: null,
      tax_id: null,
      payment_instructions: null,
      invoice_footer: null,
    });
    expectStatus(cleared, 200);
    for (const field of ["legal_name", "address", "tax_id", "payment_instructions", "invoice_footer"]) {
      assert.equal(cleared.json()[field], null, field);
    }
    assert.equal(cleared.json().paper_size, "a4", "not sent, kept");
    assert.equal(cleared.json().payment_terms_days, 14);
    assert.deepEqual((await getAccount(t(), key)).json(), cleared.json());
  });

  it("refuses bad inputs with 400 and changes nothing", async () => {
    const { key } = await t().newCompany();
    const before = (await getAccount(t(), key)).json();
    const refused: unknown[] = [
      { name: "Not a profile field" },
      { logo: null },
      { legal_name: "" },
      { legal_name: "   " },
      { legal_name: 5 },
      { legal_name: "a".repeat(201) },
      { address: "a\u0000b" },
      { address: "a".repeat(1001) },
      { tax_id: "t".repeat(101) },
      { payment_instructions: "p".repeat(2001) },
      { invoice_footer: ["x"] },
      { paper_size: "legal" },
      { paper_size: null },
      { payment_terms_days: null },
      { payment_terms_days: -1 },
      { payment_terms_days: 3651 },
      { payment_terms_days: 2.5 },
      { payment_terms_days: "30" },
      [],
    ];
    for (const payload of refused) {
      expectError(await patchAccount(t(), key, payload), 400);
    }
    assert.deepEqual((await getAccount(t(), key)).json(), before);
  });

  it("checks scopes: invoices:read reads, invoices:write changes; others are 403", async () => {
    const { key, companyId } = await t().newCompany();
    expectStatus(await putLogo(t(), key, pngImage(2, 2), "image/png"), 200);
    const reader = await keyWithScopes(t(), companyId, ["invoices:read"]);
    expectStatus(await getAccount(t(), reader), 200);
    expectStatus(await t().call({ method: "GET", url: LOGO, key: reader }), 200);
    expectError(await patchAccount(t(), reader, { tax_id: "X" }), 403);
    expectError(await putLogo(t(), reader, pngImage(2, 2), "image/png"), 403);
    expectError(await t().call({ method: "DELETE", url: LOGO, key: reader }), 403);
    const writer = await keyWithScopes(t(), companyId, ["invoices:write"]);
    expectStatus(await patchAccount(t(), writer, { tax_id: "X" }), 200);
    const customersOnly = await keyWithScopes(t(), companyId, ["customers:read", "customers:write"]);
    expectError(await getAccount(t(), customersOnly), 403);
    expectError(await t().call({ method: "GET", url: LOGO, key: customersOnly }), 403);
    expectError(await t().call({ method: "GET", url: ACCOUNT }), 401);
    expectError(await putLogo(t(), undefined, pngImage(2, 2), "image/png"), 401);
  });

  it("keeps a PNG logo byte for byte, with its size, hash and pixels; another PUT replaces it; DELETE removes it", async () => {
    const { key } = await t().newCompany();
    const png = pngImage(40, 12);
    const res = await putLogo(t(), key, png, "image/png");
    expectStatus(res, 200);
    assert.deepEqual(res.json().logo, {
      content_type: "image/png",
      size: png.length,
      sha256: sha256(png),
      width: 40,
      height: 12,
    });
    assert.deepEqual((await getAccount(t(), key)).json().logo, res.json().logo);
    const file = await t().call({ method: "GET", url: LOGO, key });
    expectStatus(file, 200);
    assert.equal(file.headers["content-type"], "image/png");
    assert.ok(file.rawPayload.equals(png), "the same bytes");

    const jpeg = await putLogo(t(), key, JPEG_16, "image/jpeg");
    expectStatus(jpeg, 200);
    assert.deepEqual(jpeg.json().logo, {
      content_type: "image/jpeg",
      size: JPEG_16.length,
      sha256: sha256(JPEG_16),
      width: 16,
      height: 16,
    });
    const jpegFile = await t().call({ method: "GET", url: LOGO, key });
    assert.equal(jpegFile.headers["content-type"], "image/jpeg");
    assert.ok(jpegFile.rawPayload.equals(JPEG_16));

    const removed = await t().call({ method: "DELETE", url: LOGO, key });
    expectStatus(removed, 200);
    assert.equal(removed.json().logo, null);
    assert.equal((await getAccount(t(), key)).json().logo, null);
    expectError(await t().call({ method: "GET", url: LOGO, key }), 404, "not_found");
    expectStatus(await t().call({ method: "DELETE", url: LOGO, key }), 200);
  });

  it("refuses a damaged, cut or fake image with 400 invalid_logo, and keeps the logo it had", async () => {
    const { key } = await t().newCompany();
    const good = pngImage(8, 8);
    expectStatus(await putLogo(t(), key, good, "image/png"), 200);

    const brokenCrc = Buffer.from(good);
    brokenCrc[8 + 8 + 13 + 2]! ^= 0xff; // a byte of IHDR's CRC
    const cases: [string, Buffer | string, string][] = [
      ["broken CRC", brokenCrc, "image/png"],
      ["cut short", good.subarray(0, good.length - 20), "image/png"],
      ["without IEND", good.subarray(0, good.length - 12), "image/png"],
      ["only the signature", good.subarray(0, 8), "image/png"],
      ["a text file", "This is not an image, just a few words.\n", "image/png"],
      ["a text file as JPEG", "hello", "image/jpeg"],
      ["a PNG header and nothing", good.subarray(0, 33), "image/png"],
      ["a JPEG cut before its frame", JPEG_16.subarray(0, 100), "image/jpeg"],
      ["too many pixels", pngImage(4001, 1), "image/png"],
      ["a row filter type that does not exist", pngImage(4, 4, { filter: 9 }), "image/png"],
    ];
    for (const [why, body, type] of cases) {
      const error = expectError(await putLogo(t(), key, body, type), 400, "invalid_logo");
      assert.ok(error.error.length > 0, why);
    }
    const empty = await putLogo(t(), key, Buffer.alloc(0), "image/png");
    assert.ok([400, 415].includes(empty.statusCode), `an empty body: ${empty.statusCode} ${empty.body}`);
    const file = await t().call({ method: "GET", url: LOGO, key });
    assert.ok(file.rawPayload.equals(good), "the logo it had is kept");
  });

  it("answers 415 for a body that is not sent as an image, 413 over 1 MiB", async () => {
    const { key } = await t().newCompany();
    expectError(
      await t().call({ method: "PUT", url: LOGO, key, payload: { logo: "base64..." } }),
      415,
      "unsupported_media_type",
    );
    expectError(await putLogo(t(), key, pngImage(2, 2), "image/gif"), 415);
    expectError(await putLogo(t(), key, pngImage(2, 2), "text/plain"), 415);
    const big = Buffer.concat([pngImage(2, 2), Buffer.alloc(1024 * 1024)]);
    expectError(await putLogo(t(), key, big, "image/png"), 413);
    assert.equal((await getAccount(t(), key)).json().logo, null);
  });

  it("shows a company only its own profile and logo", async () => {
    const a = await t().newCompany({ name: "Company A" });
    const b = await t().newCompany({ name: "Company B" });
    expectStatus(await patchAccount(t(), a.key, { tax_id: "A-TAX", payment_terms_days: 60 }), 200);
    expectStatus(await putLogo(t(), a.key, pngImage(3, 3), "image/png"), 200);
    const seen = (await getAccount(t(), b.key)).json();
    assert.equal(seen.name, "Company B");
    assert.equal(seen.tax_id, null);
    assert.equal(seen.payment_terms_days, 30);
    assert.equal(seen.logo, null);
    expectError(await t().call({ method: "GET", url: LOGO, key: b.key }), 404);
    expectStatus(await t().call({ method: "DELETE", url: LOGO, key: b.key }), 200);
    assert.notEqual((await getAccount(t(), a.key)).json().logo, null, "B's DELETE leaves A's logo");
  });
});
