import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { createCustomer, getPricing, type Contract } from "../support/api.js";
import {
  alertOf,
  dashboardCompany,
  fieldErrorOf,
  formValuesIn,
  type DashboardClient,
} from "../support/dashboard-client.js";
import { assertServedAsUpload, bombPdf, generatedAgreement, plainPdf } from "../support/uploads.js";

const file = (value: Buffer, filename = "signed.pdf", type = "application/pdf") => ({
  name: "file",
  value,
  filename,
  type,
});

/** Uploads a PDF on step one; returns the review page's path. */
async function stage(client: DashboardClient, pdf: Buffer): Promise<string> {
  const res = await client.postMultipart("/upload-contract", [file(pdf)]);
  assert.equal(res.statusCode, 303, res.body.slice(0, 1500));
  const location = String(res.headers.location);
  assert.match(location, /^\/upload-contract\/[0-9a-f-]{36}$/);
  return location;
}

async function counts(t: () => TestApp, key: string) {
  const contracts = await t().call({ method: "GET", url: "/v1/billing/contracts", key });
  const customers = await t().call({ method: "GET", url: "/v1/billing/customers?limit=100", key });
  return { contracts: contracts.json().data.length as number, customers: customers.json().data.length as number };
}

describeEachEngine("dashboard: upload a contract", (t) => {
  it("fills the review form in from one of the service's own agreements, and saves exactly what it shows", async () => {
    const { client, key } = await dashboardCompany(t);
    const list = await client.get("/contracts");
    assert.match(list.body, /href="\/upload-contract"/);
    const pdf = await generatedAgreement();
    const path = await stage(client, pdf);
    const review = await client.get(path);
    assert.equal(review.statusCode, 200);
    assert.match(review.body, /read from the PDF's text/);
    assertServedAsUpload(await client.get(`${path}/file.pdf`), "signed.pdf");
    const action = /action="(\/upload-contract\/[0-9a-f-]{36})"/.exec(review.body)![1]!;
    const shown = formValuesIn(review.body, action);
    assert.equal(shown.customer_mode, "new");
    assert.equal(shown.customer_name, "Acme Europe GmbH");
    assert.equal(shown.contract_id, "acme-eu-2026");
    assert.equal(shown.start_date, "2026-01-01");
    assert.equal(shown.end_date, "2026-12-31");
    assert.equal(shown.currency, "EUR");
    assert.equal(shown.minimum, "1000.00");
    assert.equal(shown.subscription, "99.00");
    assert.equal(shown.subscription_name, "Platform fee");
    assert.deepEqual(
      [shown.usage_metric_0, shown.usage_name_0, shown.usage_amount_0, shown.usage_rate_0, shown.usage_cap_0],
      ["sepa_transfer", "SEPA transfer", "0.25", "", "500.00"],
    );
    assert.deepEqual(
      [shown.usage_metric_1, shown.usage_name_1, shown.usage_amount_1, shown.usage_rate_1],
      ["card_payment", "Card payments", "", "2.9"],
    );

    const saved = await client.post(action, shown);
    assert.equal(saved.statusCode, 303, saved.body.slice(0, 1500));
    assert.equal(saved.headers.location, "/contracts/acme-eu-2026?done=uploaded");
    const contract = (
      await t().call({ method: "GET", url: "/v1/billing/contracts/acme-eu-2026", key })
    ).json() as Contract;
    assert.equal(contract.sample, false);
    assert.equal(contract.customer_name, "Acme Europe GmbH");
    assert.deepEqual(contract.metrics, ["sepa_transfer", "card_payment"]);
    const program = await getPricing(t(), key, contract.id);
    assert.deepEqual(
      program.rules.map((r) => [r.type, r.name, r.amount, r.rate === null ? null : String(r.rate), r.monthly_cap]),
      [
        ["minimum", "Monthly minimum", "1000.00", null, null],
        ["subscription", "Platform fee", "99.00", null, null],
        ["usage", "SEPA transfer", "0.25", null, "500.00"],
        ["usage", "Card payments", null, "0.029", null],
      ],
    );
    const detail = await client.get("/contracts/acme-eu-2026?done=uploaded");
    assert.match(detail.body, /Contract saved with its signed agreement/);
    assert.match(detail.body, /href="\/contracts\/acme-eu-2026\/agreement\.pdf">Signed agreement \(PDF\)/);
    const served = await client.get("/contracts/acme-eu-2026/agreement.pdf");
    assertServedAsUpload(served, "signed.pdf");
    assert.ok(served.rawPayload.equals(pdf), "the signed agreement is served as uploaded");
    // Saving the same upload again goes to the contract it became; nothing is created twice.
    const again = await client.post(action, shown);
    assert.equal(again.statusCode, 303);
    assert.equal(again.headers.location, "/contracts/acme-eu-2026");
    assert.deepEqual(await counts(t, key), { contracts: 1, customers: 1 });
  });

  it("takes terms typed by hand when the PDF is not one of ours, for an existing customer", async () => {
    const { client, key } = await dashboardCompany(t);
    const customer = await createCustomer(t(), key, { name: "Globex" });
    const review = await client.get(await stage(client, await plainPdf(["Services agreement between Globex and us."])));
    assert.match(review.body, /does not follow the layout of this service's agreements/);
    const action = /action="(\/upload-contract\/[0-9a-f-]{36})"/.exec(review.body)![1]!;
    const shown = formValuesIn(review.body, action);
    assert.equal(shown.contract_id, "");
    const saved = await client.post(action, {
      ...shown,
      customer_mode: "existing",
      customer_id: customer.id,
      contract_id: "globex-2026",
      start_date: "2026-03-01",
      end_date: "",
      currency: "usd",
      usage_metric_0: "api_call",
      usage_amount_0: "0.0025",
    });
    assert.equal(saved.statusCode, 303, saved.body.slice(0, 1500));
    const contract = (
      await t().call({ method: "GET", url: "/v1/billing/contracts/globex-2026", key })
    ).json() as Contract;
    assert.equal(contract.customer_id, customer.id);
    assert.equal(contract.currency, "USD");
    assert.equal(contract.end_date, null);
    assert.equal((await getPricing(t(), key, "globex-2026")).rules[0]!.amount, "0.0025");
  });

  it("shows each refused field's error beside it, in plain words, keeping what was typed and saving nothing", async () => {
    const { client, key } = await dashboardCompany(t);
    await createCustomer(t(), key, { name: "Initech", external_id: "initech" });
    const before = await counts(t, key);
    const review = await client.get(await stage(client, await plainPdf()));
    const action = /action="(\/upload-contract\/[0-9a-f-]{36})"/.exec(review.body)![1]!;
    const base = formValuesIn(review.body, action);
    const refused = await client.post(action, {
      ...base,
      customer_name: "Initech Europe",
      contract_id: "",
      start_date: "2026-05-01",
      end_date: "2026-04-30",
      currency: "XYZ",
      minimum: "1,000",
      usage_metric_0: "wires",
      usage_amount_1: "5",
    });
    assert.equal(refused.statusCode, 400);
    assert.match(alertOf(refused.body) ?? "", /fields need your attention/);
    assert.equal(fieldErrorOf(refused.body, "upload-contract-id"), "This field is required.");
    assert.equal(fieldErrorOf(refused.body, "upload-end-date"), "Must be on or after the start date.");
    assert.equal(fieldErrorOf(refused.body, "upload-currency"), "Is not a currency the service bills in.");
    assert.equal(fieldErrorOf(refused.body, "upload-start-date"), undefined);
    assert.match(refused.body, /id="upload-minimum"[^>]*value="1,000"/, "what was typed comes back");

    const badRules = await client.post(action, {
      ...base,
      customer_name: "Initech Europe",
      contract_id: "initech-eu",
      start_date: "2026-05-01",
      currency: "USD",
      minimum: "1,000",
      usage_metric_0: "wires",
      usage_amount_1: "5",
    });
    assert.equal(badRules.statusCode, 400);
    assert.equal(
      fieldErrorOf(badRules.body, "upload-minimum"),
      "Enter a number such as 12.50 (digits and one decimal point, no currency sign or commas).",
    );
    assert.equal(
      fieldErrorOf(badRules.body, "upload-usage-amount-0"),
      "Enter a price per unit (or a rate, for a percentage price).",
    );
    assert.equal(fieldErrorOf(badRules.body, "upload-usage-metric-1"), "Enter the metric: the name usage events send.");

    const taken = await client.post(action, {
      ...base,
      customer_name: "Initech again",
      customer_external_id: "initech",
      contract_id: "initech-eu",
      start_date: "2026-05-01",
      currency: "USD",
    });
    assert.equal(taken.statusCode, 409);
    assert.equal(
      fieldErrorOf(taken.body, "upload-customer-external-id"),
      "Initech already has this external id: choose that customer under “An existing customer”, or give a different id.",
    );
    assert.deepEqual(await counts(t, key), before);
  });

  it("refuses a file that is not a readable, unencrypted PDF beside the file field, and a form without its token", async () => {
    const { client } = await dashboardCompany(t);
    const documents = async () =>
      (await t().app.db.query<{ n: number }>("SELECT count(*)::int AS n FROM contract_documents")).rows[0]!.n;
    const before = await documents();
    const cases: Array<[Buffer, number, RegExp]> = [
      [Buffer.from("just text"), 415, /^The file is not a PDF/],
      [Buffer.alloc(0), 400, /^The file is empty/],
      [
        await plainPdf(["x"], { userPassword: "pw", ownerPassword: "pw2" }),
        400,
        /^The PDF is encrypted or password-protected/,
      ],
      [
        bombPdf(1024 * 1024 * 1024, { into: "page" }),
        400,
        /^The PDF unpacks into more than the service reads for one file/,
      ],
    ];
    for (const [bytes, status, message] of cases) {
      const res = await client.postMultipart("/upload-contract", [file(bytes)]);
      assert.equal(res.statusCode, status, res.body.slice(0, 800));
      assert.match(fieldErrorOf(res.body, "upload-file") ?? "", message);
    }
    const forged = await client.postMultipart("/upload-contract", [file(await plainPdf())], { csrf: "forged" });
    assert.equal(forged.statusCode, 403);
    const missing = await client.postMultipart("/upload-contract", [file(await plainPdf())], { csrf: null });
    assert.equal(missing.statusCode, 403);
    assert.equal(await documents(), before, "no refused upload is kept");
  });

  it("refuses an upload past the company's two being checked beside the file field, in plain words, with Retry-After", async () => {
    const { client } = await dashboardCompany(t);
    const bomb = bombPdf(1024 * 1024 * 1024, { into: "page" });
    // One more than the company may have checked or waiting at once: that one is answered first, at once.
    const uploads = Array.from({ length: 3 }, () => client.postMultipart("/upload-contract", [file(bomb)]));
    const first = await Promise.race(uploads);
    assert.equal(first.statusCode, 429, first.body.slice(0, 800));
    assert.equal(first.headers["retry-after"], "5");
    assert.equal(
      fieldErrorOf(first.body, "upload-file"),
      "Your company already has 2 uploaded files being checked; try this upload again in 5 seconds",
    );
    const results = await Promise.all(uploads);
    assert.deepEqual(results.map((res) => res.statusCode).sort(), [400, 400, 429]);
  });

  it("saves an upload once when two saves race, the other going to the contract it became", async () => {
    const { client, key } = await dashboardCompany(t);
    const review = await client.get(await stage(client, await generatedAgreement()));
    const action = /action="(\/upload-contract\/[0-9a-f-]{36})"/.exec(review.body)![1]!;
    const shown = formValuesIn(review.body, action);
    const [first, second] = await Promise.all([
      client.post(action, { ...shown, contract_id: "race-a" }),
      client.post(action, { ...shown, contract_id: "race-b" }),
    ]);
    assert.deepEqual(
      [first.statusCode, second.statusCode],
      [303, 303],
      `${first.body.slice(0, 300)} ${second.body.slice(0, 300)}`,
    );
    assert.deepEqual(await counts(t, key), { contracts: 1, customers: 1 });
  });

  it("keeps a company's 20 newest uploads waiting for review, and lets older ones go", async () => {
    const { client } = await dashboardCompany(t);
    const pdf = await plainPdf();
    const paths: string[] = [];
    for (let i = 0; i < 21; i++) paths.push(await stage(client, pdf));
    assert.equal((await client.get(paths[0]!)).statusCode, 404, "the oldest is gone");
    assert.equal((await client.get(paths[1]!)).statusCode, 200);
    assert.equal((await client.get(paths[20]!)).statusCode, 200);
  });

  it("answers another company's upload with 404 on every step", async () => {
    const mine = await dashboardCompany(t);
    const theirs = await dashboardCompany(t);
    const path = await stage(theirs.client, await plainPdf());
    assert.equal((await mine.client.get(path)).statusCode, 404);
    assert.equal((await mine.client.get(`${path}/file.pdf`)).statusCode, 404);
    const post = await mine.client.post(path, {
      contract_id: "stolen",
      currency: "USD",
      start_date: "2026-01-01",
      customer_name: "X",
    });
    assert.equal(post.statusCode, 404);
    assert.equal((await mine.client.get("/upload-contract/not-a-uuid")).statusCode, 404);
    assert.equal((await counts(t, mine.key)).contracts, 0);
  });
});
