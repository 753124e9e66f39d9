/**
 * The dashboard's invoice profile (Settings → Invoice profile), a customer's edit form, the customer search,
 * and the upload form's payment terms, on both engines: what a form saves is what the API then answers.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { JPEG_16, pngImage } from "../support/images.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import {
  alertOf,
  dashboardCompany,
  fieldErrorOf,
  formValuesIn,
  signUp,
  tableRows,
} from "../support/dashboard-client.js";
import { generatedAgreement } from "../support/uploads.js";

/** The customer's id from the see-other of its creation. */
const idOf = (location: unknown) => /\/customers\/([0-9a-f-]{36})/.exec(String(location))![1]!;

describeEachEngine("dashboard invoice profile and customer edits", (t) => {
  it("links the invoice profile from Settings and saves the profile, blank fields clearing", async () => {
    const { client, key } = await dashboardCompany(t, { company: "Profile Co" });
    const keys = await client.get("/settings/api-keys");
    assert.match(keys.body, /href="\/settings\/invoice-profile"/);
    const empty = await client.get("/settings/invoice-profile");
    assert.equal(empty.statusCode, 200);
    assert.match(empty.body, /<h1>Invoice profile<\/h1>/);
    assert.match(empty.body, /No logo yet/);
    assert.equal(formValuesIn(empty.body, "/settings/invoice-profile").payment_terms_days, "30");

    const saved = await client.post("/settings/invoice-profile", {
      legal_name: "Profile Co GmbH",
      address: "Hauptstraße 1\r\n10115 Berlin",
      tax_id: "DE123",
      payment_instructions: "IBAN DE89 3704 0044 0532 0130 00",
      invoice_footer: "Thank you <3",
      paper_size: "a4",
      payment_terms_days: "21",
    });
    assert.equal(saved.statusCode, 303, saved.body.slice(0, 500));
    assert.equal(saved.headers.location, "/settings/invoice-profile?done=saved");
    const shown = await client.get(String(saved.headers.location));
    assert.match(shown.body, /Invoice profile saved/);
    assert.match(shown.body, /Thank you &lt;3/);
    assert.match(shown.body, /<option value="a4" selected>/);
    const account = await apiGet(t, key, "/v1/billing/account");
    assert.equal(account.legal_name, "Profile Co GmbH");
    assert.equal(account.address, "Hauptstraße 1\n10115 Berlin");
    assert.equal(account.paper_size, "a4");
    assert.equal(account.payment_terms_days, 21);

    const cleared = await client.post("/settings/invoice-profile", {
      legal_name: "",
      address: "",
      tax_id: "",
      payment_instructions: "",
      invoice_footer: "",
      paper_size: "letter",
      payment_terms_days: "21",
    });
    assert.equal(cleared.statusCode, 303);
    const after = await apiGet(t, key, "/v1/billing/account");
    assert.equal(after.legal_name, null);
    assert.equal(after.invoice_footer, null);
    assert.equal(after.paper_size, "letter");
  });

  it("shows a refused profile field beside it, keeping what was typed", async () => {
    const { client } = await signUp(t);
    const refused = await client.post("/settings/invoice-profile", {
      legal_name: "Kept Name",
      paper_size: "letter",
      payment_terms_days: "-3",
    });
    assert.equal(refused.statusCode, 400);
    assert.ok(alertOf(refused.body));
    assert.equal(fieldErrorOf(refused.body, "profile-payment_terms_days"), "Enter 0 or more.");
    assert.match(refused.body, /value="Kept Name"/);
    const badPaper = await client.post("/settings/invoice-profile", { paper_size: "legal", payment_terms_days: "30" });
    assert.equal(badPaper.statusCode, 400);
    assert.ok(fieldErrorOf(badPaper.body, "profile-paper_size"));
  });

  it("uploads a logo through the form, shows its size and preview, refuses a damaged one, and removes it", async () => {
    const { client } = await signUp(t);
    const png = pngImage(30, 10);
    const up = await client.postMultipart("/settings/invoice-profile/logo", [
      { name: "logo", value: png, filename: "logo.png", type: "image/png" },
    ]);
    assert.equal(up.statusCode, 303, up.body.slice(0, 500));
    const shown = await client.get(String(up.headers.location));
    assert.match(shown.body, /Logo saved/);
    assert.match(shown.body, /PNG, 30×10 pixels, \d+ bytes/);
    assert.match(shown.body, /<img src="\/settings\/invoice-profile\/logo"/);
    const image = await client.get("/settings/invoice-profile/logo");
    assert.equal(image.statusCode, 200);
    assert.equal(image.headers["content-type"], "image/png");
    assert.ok(image.rawPayload.equals(png));

    const jpeg = await client.postMultipart("/settings/invoice-profile/logo", [
      { name: "logo", value: JPEG_16, filename: "logo.jpg", type: "image/jpeg" },
    ]);
    assert.equal(jpeg.statusCode, 303);
    assert.match((await client.get("/settings/invoice-profile")).body, /JPEG, 16×16 pixels, 543 bytes/);

    const damaged = Buffer.from(png);
    damaged[damaged.length - 20]! ^= 0xff;
    const refused = await client.postMultipart("/settings/invoice-profile/logo", [
      { name: "logo", value: damaged, filename: "logo.png", type: "image/png" },
    ]);
    assert.equal(refused.statusCode, 400);
    assert.match(fieldErrorOf(refused.body, "profile-logo") ?? "", /damaged/);
    const text = await client.postMultipart("/settings/invoice-profile/logo", [
      { name: "logo", value: Buffer.from("just text"), filename: "logo.png", type: "image/png" },
    ]);
    assert.equal(text.statusCode, 400);
    const tooBig = await client.postMultipart("/settings/invoice-profile/logo", [
      { name: "logo", value: Buffer.alloc(1024 * 1024 + 1), filename: "big.png", type: "image/png" },
    ]);
    assert.equal(tooBig.statusCode, 413);
    const forged = await client.postMultipart(
      "/settings/invoice-profile/logo",
      [{ name: "logo", value: png, filename: "logo.png", type: "image/png" }],
      { csrf: "forged" },
    );
    assert.equal(forged.statusCode, 403);
    assert.match((await client.get("/settings/invoice-profile")).body, /JPEG, 16×16 pixels/, "the logo it had is kept");

    const removed = await client.post("/settings/invoice-profile/logo/delete", {});
    assert.equal(removed.statusCode, 303);
    assert.match((await client.get(String(removed.headers.location))).body, /Logo removed[\s\S]*No logo yet/);
    assert.equal((await client.get("/settings/invoice-profile/logo")).statusCode, 404);
  });

  it("edits a customer's terms and every other field through its form, prefilled, and shows them", async () => {
    const { client, key } = await dashboardCompany(t);
    const created = await client.post("/customers", { name: "Editable Ltd", external_id: "ed-1" });
    const id = idOf(created.headers.location);
    const detail = await client.get(`/customers/${id}`);
    const prefilled = formValuesIn(detail.body, `/customers/${id}`);
    assert.equal(prefilled.name, "Editable Ltd");
    assert.equal(prefilled.external_id, "ed-1");
    assert.equal(prefilled.invoice_delivery, "none");

    const saved = await client.post(`/customers/${id}`, {
      ...prefilled,
      email: "ap@editable.example",
      payment_terms_days: "45",
      tax_id: "GB123",
      invoice_memo: "PO 77",
      address: "1 High Street\r\nLondon",
      invoice_delivery: "email",
    });
    assert.equal(saved.statusCode, 303, saved.body.slice(0, 500));
    const shown = await client.get(String(saved.headers.location));
    assert.match(shown.body, /Customer saved/);
    assert.match(shown.body, /Net 45/);
    assert.match(shown.body, /PO 77/);
    assert.match(shown.body, /emailed when issued/);
    assert.equal(formValuesIn(shown.body, `/customers/${id}`).payment_terms_days, "45");
    const customer = await apiGet(t, key, `/v1/billing/customers/${id}`);
    assert.equal(customer.payment_terms_days, 45);
    assert.equal(customer.address, "1 High Street\nLondon");
    assert.equal(customer.invoice_delivery, "email");

    // Blank terms: the account's default again.
    const cleared = await client.post(`/customers/${id}`, {
      ...formValuesIn(shown.body, `/customers/${id}`),
      payment_terms_days: "",
    });
    assert.equal(cleared.statusCode, 303);
    assert.equal((await apiGet(t, key, `/v1/billing/customers/${id}`)).payment_terms_days, null);
  });

  it("shows a refused customer edit beside its field: no email for emailed invoices, a taken external id, no name", async () => {
    const { client, key } = await dashboardCompany(t);
    await client.post("/customers", { name: "Holder", external_id: "held" });
    const id = idOf((await client.post("/customers", { name: "Changer", external_id: "mine" })).headers.location);
    const base = formValuesIn((await client.get(`/customers/${id}`)).body, `/customers/${id}`);

    const noEmail = await client.post(`/customers/${id}`, { ...base, invoice_delivery: "email" });
    assert.equal(noEmail.statusCode, 400);
    assert.ok(fieldErrorOf(noEmail.body, "edit-email"));
    const taken = await client.post(`/customers/${id}`, { ...base, external_id: "held" });
    assert.equal(taken.statusCode, 409);
    assert.match(fieldErrorOf(taken.body, "edit-external_id") ?? "", /already has this external id/);
    assert.match(taken.body, /value="held"/, "what was typed is kept");
    const noName = await client.post(`/customers/${id}`, { ...base, name: "" });
    assert.equal(noName.statusCode, 400);
    assert.equal(fieldErrorOf(noName.body, "edit-name"), "This field is required.");
    const badTerms = await client.post(`/customers/${id}`, { ...base, payment_terms_days: "thirty" });
    assert.equal(badTerms.statusCode, 400);
    assert.equal(fieldErrorOf(badTerms.body, "edit-payment_terms_days"), "Enter a whole number.");
    const customer = await apiGet(t, key, `/v1/billing/customers/${id}`);
    assert.equal(customer.name, "Changer");
    assert.equal(customer.external_id, "mine");
  });

  it("searches customers by name (any case) or external id from the list's search box", async () => {
    const { client } = await signUp(t);
    await client.post("/customers", { name: "Acme Europe", external_id: "acme-eu" });
    await client.post("/customers", { name: "Globex", external_id: "G-ACME" });
    await client.post("/customers", { name: "Initech" });
    const list = await client.get("/customers");
    assert.match(list.body, /name="search"/);
    const byName = tableRows((await client.get("/customers?search=EUROPE")).body, "Customers");
    assert.equal(byName.length, 1);
    assert.match(byName[0]!, /Acme Europe/);
    const byExternalId = tableRows((await client.get("/customers?search=G-ACME")).body, "Customers");
    assert.equal(byExternalId.length, 1);
    assert.match(byExternalId[0]!, /Globex/);
    const none = await client.get("/customers?search=nobody");
    assert.match(none.body, /No customer&#39;s name contains “nobody”/);
    assert.equal((await client.get(`/customers?search=${"x".repeat(300)}`)).statusCode, 200);
  });

  it("takes payment terms on the upload review form into the contract, and shows them on its page", async () => {
    const { client } = await signUp(t);
    const staged = await client.postMultipart("/upload-contract", [
      { name: "file", value: await generatedAgreement(), filename: "agreement.pdf", type: "application/pdf" },
    ]);
    assert.equal(staged.statusCode, 303, staged.body.slice(0, 300));
    const review = await client.get(String(staged.headers.location));
    assert.match(review.body, /name="payment_terms_days"/);
    const action = String(staged.headers.location);
    const values = formValuesIn(review.body, action);
    const bad = await client.post(action, { ...values, payment_terms_days: "-1" });
    assert.equal(bad.statusCode, 400);
    assert.equal(fieldErrorOf(bad.body, "upload-payment-terms"), "Enter 0 or more.");
    const saved = await client.post(action, { ...values, payment_terms_days: "15" });
    assert.equal(saved.statusCode, 303, saved.body.slice(0, 800));
    const contractPage = await client.get(String(saved.headers.location));
    assert.match(contractPage.body, /<dt>Payment terms<\/dt><dd>Net 15<\/dd>/);
  });
});

/** What the API answers the company's key for `url`. */
async function apiGet(t: () => TestApp, key: string, url: string) {
  const res = await t().call({ method: "GET", url, key });
  assert.equal(res.statusCode, 200, res.body);
  return res.json();
}
