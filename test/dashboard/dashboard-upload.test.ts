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
import { assertServedAsUpload, bombPdf, plainPdf } from "../support/uploads.js";
import type { ContractExtraction } from "../../src/domain/contracts/extraction/extraction-types.js";

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

/**
 * Stages a PDF through the upload form, then gives its staged row `extraction` as its reading: the review page
 * is tested on what a reading proposed, whatever the reader finds in the test's PDF. Returns the form's action.
 */
async function stageWith(t: () => TestApp, client: DashboardClient, extraction: ContractExtraction): Promise<string> {
  const path = await stage(client, await plainPdf());
  await t().app.db.query("UPDATE contract_documents SET reading = $1::jsonb WHERE id = $2", [
    JSON.stringify(extraction),
    path.split("/").pop(),
  ]);
  return path;
}

const PAY_WITHIN = "Customer shall pay each invoice within fifteen (15) days of the invoice date.";

/** What reading a prose agreement proposes: a text-layer reading, one unsure value, a tiered price. */
function harborReading(): ContractExtraction {
  const field = (
    path: string,
    value: ContractExtraction["fields"][number]["value"],
    source: string,
    page = 1,
    confidence = 0.95,
  ) => ({
    field: path,
    value,
    confidence,
    page,
    source_text: source,
  });
  return {
    object: "contract_extraction",
    terms: {
      customer: {
        name: "Harbor Freight Logistics Inc.",
        address: "400 Pier Road, Oakland, CA 94607",
        email: "ap@harborfreight.example",
      },
      contract_id: "MSA-2026-0142",
      start_date: "2026-01-05",
      end_date: "2027-01-04",
      currency: "USD",
      payment_terms_days: 15,
      rules: [
        { type: "minimum", model: "flat", name: "Monthly minimum", amount: "1500.00" },
        { type: "subscription", model: "flat", frequency: "monthly", name: "Platform fee", amount: "250.00" },
        {
          type: "usage",
          model: "percentage",
          name: "Card volume",
          metric: "card_volume",
          rate: "0.0235",
          monthly_cap: "4000.00",
        },
        { type: "usage", model: "flat", name: "ACH debit", metric: "ach_debit", amount: "0.28" },
        {
          type: "usage",
          model: "graduated",
          name: "API calls",
          metric: "api_calls",
          tiers: [
            { up_to: "10000", unit_amount: "0.002" },
            { up_to: null, unit_amount: "0.001" },
          ],
        },
        {
          type: "usage",
          model: "flat",
          name: "International wire",
          metric: "international_wire",
          amount: "18.00",
          counterparty: "HSBC UK",
        },
      ],
    },
    fields: [
      field("customer.name", "Harbor Freight Logistics Inc.", "and Harbor Freight Logistics Inc. (the “Customer”)"),
      field("customer.address", "400 Pier Road, Oakland, CA 94607", "400 Pier Road, Oakland, CA 94607"),
      field("contract_id", "MSA-2026-0142", "Agreement No. MSA-2026-0142"),
      field("start_date", "2026-01-05", "effective January 5, 2026"),
      field("end_date", "2027-01-04", "for twelve (12) months"),
      field("currency", "USD", "All amounts are in US dollars ($)."),
      field("payment_terms_days", 15, PAY_WITHIN, 2),
      field("rules.0.amount", "1500.00", "a monthly minimum of $1,500.00", 2),
      field("rules.1.amount", "250.00", "a platform fee of $250.00 per month", 2),
      field("rules.2.rate", "0.0235", "2.35% of card volume, capped at $4,000.00 per month", 2),
      field("rules.2.monthly_cap", "4000.00", "2.35% of card volume, capped at $4,000.00 per month", 2),
      field("rules.3.amount", "0.28", "$0.28 per ACH debit", 2),
      field("rules.4.tiers", null, "API calls: $0.002 each up to 10,000, then $0.001", 3),
      field("rules.5.amount", "18.00", "$18.00 per international wire sent through HSBC UK", 3),
      field("rules.5.counterparty", "HSBC UK", "$18.00 per international wire sent through HSBC UK", 3, 0.55),
    ],
    warnings: [],
  };
}

/** The text of the element with this id, tags dropped. */
const textOf = (body: string, id: string): string | undefined =>
  new RegExp(`id="${id}"[^>]*>([\\s\\S]*?)</p>`).exec(body)?.[1]?.replace(/<[^>]+>/g, "");

describeEachEngine("dashboard: upload a contract", (t) => {
  it("fills the review form in from the reading, each value beside its source, and saves exactly what it shows", async () => {
    const { client, key } = await dashboardCompany(t);
    const list = await client.get("/contracts");
    assert.match(list.body, /href="\/upload-contract"/);
    const path = await stageWith(t, client, harborReading());
    const review = await client.get(path);
    assert.equal(review.statusCode, 200);
    assert.match(
      review.body,
      /The terms below were read from the PDF\. Each value shows where it came from: check them against the agreement before saving\./,
    );
    assertServedAsUpload(await client.get(`${path}/file.pdf`), "signed.pdf");
    const action = /action="(\/upload-contract\/[0-9a-f-]{36})"/.exec(review.body)![1]!;
    const shown = formValuesIn(review.body, action);
    assert.equal(shown.customer_mode, "new");
    assert.equal(shown.customer_name, "Harbor Freight Logistics Inc.");
    assert.equal(shown.customer_address, "400 Pier Road, Oakland, CA 94607");
    assert.equal(shown.customer_email, "ap@harborfreight.example");
    assert.equal(shown.contract_id, "MSA-2026-0142");
    assert.equal(shown.start_date, "2026-01-05");
    assert.equal(shown.end_date, "2027-01-04");
    assert.equal(shown.currency, "USD");
    assert.equal(shown.payment_terms_days, "15");
    assert.equal(shown.minimum, "1500.00");
    assert.equal(shown.subscription, "250.00");
    assert.equal(shown.subscription_name, "Platform fee");
    // One row per usage price the form can edit, none blank; the tiered price is shown as read.
    assert.equal(shown.usage_rows, "3");
    assert.deepEqual(
      [0, 1, 2].map((i) => [
        shown[`usage_metric_${i}`],
        shown[`usage_name_${i}`],
        shown[`usage_amount_${i}`],
        shown[`usage_rate_${i}`],
        shown[`usage_cap_${i}`],
        shown[`usage_counterparty_${i}`],
      ]),
      [
        ["card_volume", "Card volume", "", "2.35", "4000.00", ""],
        ["ach_debit", "ACH debit", "0.28", "", "", ""],
        ["international_wire", "International wire", "18.00", "", "", "HSBC UK"],
      ],
    );
    assert.equal(shown.usage_metric_3, undefined);
    assert.match(review.body, /<button type="submit" name="add_row" value="1"[^>]*>Add a row<\/button>/);

    // Each value beside the page and the exact text it came from, tied to its field.
    assert.equal(textOf(review.body, "upload-payment-terms-source"), `p. 2 · “${PAY_WITHIN}”`);
    assert.match(review.body, /id="upload-payment-terms"[^>]*aria-describedby="upload-payment-terms-source"/);
    assert.equal(textOf(review.body, "upload-contract-id-source"), "p. 1 · “Agreement No. MSA-2026-0142”");
    assert.equal(textOf(review.body, "upload-minimum-source"), "p. 2 · “a monthly minimum of $1,500.00”");
    // A row whose fields come from one line shows it once.
    assert.equal(
      textOf(review.body, "upload-usage-rate-0-source"),
      "p. 2 · “2.35% of card volume, capped at $4,000.00 per month”",
    );
    assert.equal(textOf(review.body, "upload-usage-cap-0-source"), undefined);
    // The unsure value is marked in words, not colour alone, and only it.
    assert.equal(textOf(review.body, "upload-usage-counterparty-2-check"), "Check: read with low confidence.");
    assert.match(
      review.body,
      /id="upload-usage-counterparty-2"[^>]*aria-describedby="upload-usage-counterparty-2-check upload-usage-amount-2-source"/,
    );
    assert.equal((review.body.match(/class="reviewed low-confidence"/g) ?? []).length, 1);
    // The tiered price: its wording, its source, and a box to keep it, ticked.
    const kept = /<div class="kept-rule[^"]*" role="group" aria-label="API calls">([\s\S]*?Keep this price)/.exec(
      review.body,
    )?.[1];
    assert.ok(kept, "the tiered price is shown as read");
    assert.match(kept, /<strong>API calls<\/strong>: /);
    assert.match(kept, /<p class="source">p\. 3 · “API calls: \$0\.002 each up to 10,000, then \$0\.001”<\/p>/);
    assert.match(kept, /Keep this price/);
    assert.equal(shown.keep_rule_0, "1");
    assert.equal(JSON.parse(shown.kept_rule_0!).model, "graduated");

    const saved = await client.post(action, shown);
    assert.equal(saved.statusCode, 303, saved.body.slice(0, 1500));
    assert.equal(saved.headers.location, "/contracts/MSA-2026-0142?done=uploaded");
    const contract = (
      await t().call({ method: "GET", url: "/v1/billing/contracts/MSA-2026-0142", key })
    ).json() as Contract;
    assert.equal(contract.sample, false);
    assert.equal(contract.customer_name, "Harbor Freight Logistics Inc.");
    assert.equal(contract.payment_terms_days, 15);
    assert.deepEqual(contract.metrics, ["card_volume", "ach_debit", "international_wire", "api_calls"]);
    const customer = (
      await t().call({ method: "GET", url: `/v1/billing/customers/${contract.customer_id}`, key })
    ).json();
    assert.equal(customer.address, "400 Pier Road, Oakland, CA 94607");
    assert.equal(customer.email, "ap@harborfreight.example");
    const program = await getPricing(t(), key, contract.id);
    assert.deepEqual(
      program.rules.map((r) => [
        r.type,
        r.model,
        r.name,
        r.amount,
        r.rate === null ? null : String(r.rate),
        r.monthly_cap,
        r.counterparty,
      ]),
      [
        ["minimum", "flat", "Monthly minimum", "1500.00", null, null, null],
        ["subscription", "flat", "Platform fee", "250.00", null, null, null],
        ["usage", "percentage", "Card volume", null, "0.0235", "4000.00", null],
        ["usage", "flat", "ACH debit", "0.28", null, null, null],
        ["usage", "flat", "International wire", "18.00", null, null, "HSBC UK"],
        ["usage", "graduated", "API calls", null, null, null, null],
      ],
    );
    assert.deepEqual(
      program.rules[5]!.tiers?.map((tier) => [
        tier.up_to === null ? null : String(tier.up_to),
        String(tier.unit_amount),
      ]),
      [
        ["10000", "0.002"],
        [null, "0.001"],
      ],
    );
    const detail = await client.get("/contracts/MSA-2026-0142?done=uploaded");
    assert.match(detail.body, /Contract saved with its signed agreement/);
    assert.match(detail.body, /href="\/contracts\/MSA-2026-0142\/agreement\.pdf">Signed agreement \(PDF\)/);
    assertServedAsUpload(await client.get("/contracts/MSA-2026-0142/agreement.pdf"), "signed.pdf");
    // Saving the same upload again goes to the contract it became; nothing is created twice.
    const again = await client.post(action, shown);
    assert.equal(again.statusCode, 303);
    assert.equal(again.headers.location, "/contracts/MSA-2026-0142");
    assert.deepEqual(await counts(t, key), { contracts: 1, customers: 1 });
  });

  it("adds a row on “Add a row”, keeping every value typed so far; a price left unticked is not saved", async () => {
    const { client, key } = await dashboardCompany(t);
    const path = await stageWith(t, client, harborReading());
    const review = await client.get(path);
    const action = /action="(\/upload-contract\/[0-9a-f-]{36})"/.exec(review.body)![1]!;
    const { keep_rule_0: _ticked, ...shown } = formValuesIn(review.body, action);
    const typed = {
      ...shown,
      contract_id: "MSA-2026-0142-A",
      usage_cap_0: "3500",
      usage_counterparty_2: "HSBC Bank UK",
    };
    const more = await client.post(action, { ...typed, add_row: "1" });
    assert.equal(more.statusCode, 200, more.body.slice(0, 800));
    const again = formValuesIn(more.body, action);
    assert.equal(again.usage_rows, "4");
    assert.equal(again.contract_id, "MSA-2026-0142-A");
    assert.equal(again.usage_cap_0, "3500");
    assert.equal(again.usage_counterparty_2, "HSBC Bank UK");
    assert.equal(again.usage_metric_1, "ach_debit");
    assert.deepEqual(
      [again.usage_metric_3, again.usage_name_3, again.usage_amount_3, again.usage_rate_3],
      ["", "", "", ""],
    );
    assert.equal(again.keep_rule_0, undefined, "the unticked price stays unticked");
    assert.ok(again.kept_rule_0, "and is still carried");
    // The sources are still shown beside the values they were found for.
    assert.equal(textOf(more.body, "upload-payment-terms-source"), `p. 2 · “${PAY_WITHIN}”`);
    assert.equal(await counts(t, key).then((c) => c.contracts), 0, "adding a row saves nothing");

    const withRow = await client.post(action, {
      ...again,
      usage_metric_3: "fx_conversion",
      usage_rate_3: "1.5",
      usage_fixed_fee_3: "0.30",
    });
    assert.equal(withRow.statusCode, 303, withRow.body.slice(0, 1500));
    const program = await getPricing(t(), key, "MSA-2026-0142-A");
    assert.deepEqual(
      program.rules.map((r) => [r.name, r.model, r.monthly_cap, r.counterparty, r.fixed_fee ?? null]),
      [
        ["Monthly minimum", "flat", null, null, null],
        ["Platform fee", "flat", null, null, null],
        ["Card volume", "percentage", "3500.00", null, null],
        ["ACH debit", "flat", null, null, null],
        ["International wire", "flat", null, "HSBC Bank UK", null],
        ["fx_conversion", "percentage", null, null, "0.30"],
      ],
    );
    assert.equal(String(program.rules[5]!.rate), "0.015");
  });

  it("refuses a carried price changed on its way beside its box, saving nothing", async () => {
    const { client, key } = await dashboardCompany(t);
    const review = await client.get(await stageWith(t, client, harborReading()));
    const action = /action="(\/upload-contract\/[0-9a-f-]{36})"/.exec(review.body)![1]!;
    const shown = formValuesIn(review.body, action);
    // The name and the tiers are the form's own fields; a metric is not, so one dropped on the way is refused.
    for (const forged of ['{"type":"usage","model":"graduated","name":"API calls"}', "not json"]) {
      const refused = await client.post(action, { ...shown, kept_rule_0: forged });
      assert.equal(refused.statusCode, 400, refused.body.slice(0, 800));
      assert.ok(fieldErrorOf(refused.body, "upload-kept-0"), "the error is beside the price's box");
    }
    assert.deepEqual(await counts(t, key), { contracts: 0, customers: 0 });
  });

  it("renames a tiered price read from the agreement and changes its tiers before saving", async () => {
    const { client, key } = await dashboardCompany(t);
    const reading = harborReading();
    reading.terms.rules![4]!.name = "Band it falls in, as follows";
    const review = await client.get(await stageWith(t, client, reading));
    const action = /action="(\/upload-contract\/[0-9a-f-]{36})"/.exec(review.body)![1]!;
    const shown = formValuesIn(review.body, action);
    // The name and each tier as read, in fields.
    assert.equal(shown.kept_name_0, "Band it falls in, as follows");
    assert.deepEqual(
      [
        shown.kept_tier_up_to_0_0,
        shown.kept_tier_unit_amount_0_0,
        shown.kept_tier_up_to_0_1,
        shown.kept_tier_unit_amount_0_1,
      ],
      ["10000", "0.002", "", "0.001"],
    );
    assert.match(review.body, /<label for="upload-kept-0-name">Name of price 1/);
    assert.match(review.body, /<label for="upload-kept-0-tier-1-unit-amount">Tier 2: price per unit, USD<\/label>/);
    // A tier's bad price is refused beside that tier's field, with what was typed kept.
    const edited = {
      ...shown,
      kept_name_0: "API calls",
      kept_tier_up_to_0_0: "20000",
      kept_tier_unit_amount_0_1: "cheap",
    };
    const refused = await client.post(action, edited);
    assert.equal(refused.statusCode, 400, refused.body.slice(0, 800));
    assert.ok(fieldErrorOf(refused.body, "upload-kept-0-tier-1-unit-amount"), "the error is beside the tier's price");
    assert.equal(formValuesIn(refused.body, action).kept_name_0, "API calls");
    assert.match(refused.body, /<strong>API calls<\/strong>: /, "the price is shown by the name typed");
    assert.deepEqual(await counts(t, key), { contracts: 0, customers: 0 });

    const saved = await client.post(action, { ...edited, kept_tier_unit_amount_0_1: "0.0008" });
    assert.equal(saved.statusCode, 303, saved.body.slice(0, 1500));
    const rule = (await getPricing(t(), key, "MSA-2026-0142")).rules.find((r) => r.model === "graduated")!;
    assert.equal(rule.name, "API calls");
    assert.deepEqual(
      rule.tiers?.map((tier) => [tier.up_to === null ? null : String(tier.up_to), String(tier.unit_amount)]),
      [
        ["20000", "0.002"],
        [null, "0.0008"],
      ],
    );
  });

  it("says when pages were read by OCR, when nothing could be read, and shows every warning", async () => {
    const { client } = await dashboardCompany(t);
    const ocr = harborReading();
    ocr.fields = ocr.fields.map((f) => ({ ...f, confidence: 0.7 }));
    ocr.warnings = [{ code: "ocr", message: "Pages 1–2 have no text: they were read by OCR.", pages: [1, 2] }];
    const scanned = await client.get(await stageWith(t, client, ocr));
    assert.match(scanned.body, /Pages 1–2 have no text and were read by OCR: check every value\./);
    assert.match(scanned.body, /<li>Pages 1–2 have no text: they were read by OCR\.<\/li>/);
    assert.ok((scanned.body.match(/<strong>Check<\/strong>/g) ?? []).length > 5, "every OCR value is marked");

    const oneOcr = harborReading();
    oneOcr.warnings = [{ code: "ocr", message: "Page 3 was read by OCR.", pages: [3] }];
    assert.match((await client.get(await stageWith(t, client, oneOcr))).body, /Page 3 has no text and was read by OCR/);

    const failed: ContractExtraction = {
      object: "contract_extraction",
      terms: {},
      fields: [],
      warnings: [
        { code: "ocr_failed", message: "Page 1 could not be read by OCR in time.", pages: [1] },
        { code: "nothing_found", message: "No contract terms were recognised." },
      ],
    };
    const unread = await client.get(await stageWith(t, client, failed));
    assert.match(unread.body, /The terms could not be read from this PDF \(see below\): type them in the form\./);
    assert.match(unread.body, /<li>Page 1 could not be read by OCR in time\.<\/li>/);
    assert.match(unread.body, /<li>No contract terms were recognised\.<\/li>/);
    assert.equal(
      formValuesIn(unread.body, /action="(\/upload-contract\/[0-9a-f-]{36})"/.exec(unread.body)![1]!).usage_rows,
      "1",
    );

    const nothing = await client.get(
      await stageWith(t, client, {
        ...failed,
        warnings: [{ code: "nothing_found", message: "No contract terms were recognised." }],
      }),
    );
    assert.match(nothing.body, /No terms were found in this PDF: type them below\./);

    // An upload staged by the older reader (its own layout only) within its day: shown as nothing read.
    const older = await stage(client, await plainPdf());
    await t().app.db.query("UPDATE contract_documents SET reading = $1::jsonb WHERE id = $2", [
      JSON.stringify({
        customer_name: "Acme",
        contract_id: "acme",
        start_date: null,
        end_date: null,
        currency: null,
        rules: [],
      }),
      older.split("/").pop(),
    ]);
    const shownOlder = await client.get(older);
    assert.equal(shownOlder.statusCode, 200);
    assert.match(shownOlder.body, /Nothing was read from this PDF: type the terms below\./);
  });

  it("takes terms typed by hand when the PDF is not one of ours, for an existing customer", async () => {
    const { client, key } = await dashboardCompany(t);
    const customer = await createCustomer(t(), key, { name: "Globex" });
    // A PDF with no terms in it: the form is left blank, and the page says so.
    const review = await client.get(
      await stage(client, await plainPdf(["Meeting notes", "Nothing was agreed today."])),
    );
    assert.match(review.body, /No terms were found in this PDF: type them below\./);
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
      usage_rows: "2",
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
      usage_rows: "2",
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
    const review = await client.get(await stageWith(t, client, harborReading()));
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
