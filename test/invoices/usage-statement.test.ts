/**
 * The usage statement (GET /v1/billing/invoices/{number}/usage.csv), on both engines: every event billed on the
 * invoice, whose sums give the invoice's usage and fee lines to the cent for random data on both ingestion
 * paths, quoted as RFC 4180 asks, paged through the database without holding the events, with the SHA-256
 * of exactly the bytes sent.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { it } from "node:test";
import Big from "big.js";
import { forCompany } from "../../src/db/company-scope.js";
import { roundToMinorUnit } from "../../src/domain/kernel/money.js";
import {
  INVOICES,
  addRule,
  companyWithContract,
  invoiceFor,
  keyWithScopes,
  submitAccepted,
  usageEvent,
} from "../support/api.js";
import { expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";

const COLUMNS =
  "row_type,event_id,timestamp,metric,counterparty,counterparty_side,pair,quantity,fee_amount,applied_rate,rated_amount,rule_id,pricing_version,line_kind,description,unit_price,amount";

/** RFC 4180 rows (CRLF, quoted fields with doubled quotes). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = "";
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') (field += '"'), i++;
      else if (c === '"') quoted = false;
      else field += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") row.push(field), (field = "");
    else if (c === "\r" && text[i + 1] === "\n") {
      row.push(field);
      rows.push(row);
      (row = []), (field = ""), i++;
    } else field += c;
  }
  assert.equal(field, "", "the file ends with CRLF");
  return rows;
}

/** Every row of the statement (events, then the invoice's lines, tax and total), by column name. */
async function statementRows(t: TestApp, key: string, number: string) {
  const res = await t.call({ method: "GET", url: `${INVOICES}/${number}/usage.csv`, key });
  expectStatus(res, 200);
  assert.equal(res.headers["content-type"], "text/csv; charset=utf-8");
  assert.equal(res.headers["content-disposition"], `attachment; filename="${number}-usage.csv"`);
  const digest = createHash("sha256").update(res.rawPayload).digest("base64");
  assert.equal(res.headers["content-digest"], `sha-256=:${digest}:`, "the digest is that of the bytes sent");
  const [header, ...rows] = parseCsv(res.body);
  assert.equal(header!.join(","), COLUMNS);
  for (const r of rows) assert.equal(r.length, COLUMNS.split(",").length, `every row has every column: ${r.join(",")}`);
  const named = rows.map(
    (r) => Object.fromEntries(COLUMNS.split(",").map((name, i) => [name, r[i]!])) as Record<string, string>,
  );
  const types = named.map((r) => r.row_type);
  const events = types.filter((type) => type === "event").length;
  assert.deepEqual(types.slice(-2), ["tax", "total"], "the tax and the total come last");
  assert.ok(
    types.slice(0, events).every((type) => type === "event") &&
      types.slice(events, -2).every((type) => type === "line"),
    "the events, then the lines",
  );
  return named;
}

/** The statement's event rows. */
async function statement(t: TestApp, key: string, number: string) {
  return (await statementRows(t, key, number)).filter((r) => r.row_type === "event");
}

/** A small deterministic generator, so that a failure replays. */
function random(seed: number) {
  let state = seed;
  return () => (state = (Math.imul(state, 1103515245) + 12345) >>> 0) / 2 ** 32;
}

describeEachEngine("usage statement", (t) => {
  for (const [label, capped] of [
    ["the batch path", false],
    ["the capped-rule path", true],
  ] as const) {
    it(`sums to the invoice's usage and fee lines to the cent, for random events on ${label}`, async () => {
      const { key, contract } = await companyWithContract(t());
      await addRule(t(), key, contract.id, {
        type: "usage",
        metric: "card",
        model: "percentage",
        rate: "0.029",
        ...(capped ? { monthly_cap: "35.00" } : {}),
      });
      await addRule(t(), key, contract.id, {
        type: "usage",
        metric: "fx",
        amount: "0.0137",
        counterparty: 'Acme, "Inc"',
      });
      const next = random(capped ? 7 : 42);
      const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
      const digits = (max: number, places: number) => (next() * max).toFixed(places);
      for (let batch = 0; batch < 4; batch++) {
        const events = Array.from({ length: 30 }, () => {
          const metric = pick(["domestic_wire", "international_wire", "card", "fx", "fee"] as const);
          if (metric === "fee")
            return usageEvent(contract.id, {
              metric: "domestic_wire",
              quantity: digits(9, 3),
              fee_amount: digits(3, 5),
            });
          if (metric === "fx")
            return usageEvent(contract.id, { metric, quantity: digits(1000, 2), counterparty: 'Acme, "Inc"' });
          if (metric === "card")
            return usageEvent(contract.id, {
              metric,
              quantity: digits(500, 2),
              ...(next() < 0.2 ? { applied_rate: "0.031" } : {}),
            });
          return usageEvent(contract.id, { metric, quantity: String(1 + Math.floor(next() * 4)) });
        });
        await submitAccepted(t(), key, events);
      }
      const invoice = await invoiceFor(t(), key, contract.id);
      const rows = await statement(t(), key, invoice.number);
      assert.equal(rows.length, 120);
      assert.ok(
        rows.some((r) => r.counterparty === 'Acme, "Inc"'),
        "a quoted field comes back as sent",
      );

      // Rows grouped as the lines are: usage by rule and applied rate, fees by metric.
      const sums = new Map<string, { quantity: Big; charge: Big }>();
      for (const r of rows) {
        const key =
          r.fee_amount !== "" ? `fee|${r.metric}` : `usage|${r.rule_id}|${new Big(r.applied_rate!).toFixed()}`;
        const sum = sums.get(key) ?? { quantity: new Big(0), charge: new Big(0) };
        sums.set(key, { quantity: sum.quantity.plus(r.quantity!), charge: sum.charge.plus(r.rated_amount!) });
      }
      const billed = invoice.line_items.filter((l) => l.kind === "usage" || l.kind === "fee");
      assert.equal(billed.length, sums.size, "one group of rows per usage or fee line");
      for (const line of billed) {
        const key =
          line.kind === "fee" ? `fee|${line.metric}` : `usage|${line.rule_id}|${new Big(line.unit_price).toFixed()}`;
        const sum = sums.get(key);
        assert.ok(sum, `rows for ${key}`);
        assert.equal(roundToMinorUnit(sum.charge, "USD").toFixed(2), new Big(line.amount).toFixed(2), `${key}: amount`);
        assert.ok(sum.quantity.eq(new Big(line.quantity)), `${key}: quantity ${sum.quantity} vs ${line.quantity}`);
      }
    });
  }

  it("pages through thousands of events in the order they were stored, the digest still that of the whole file", async () => {
    const { key, companyId, contract } = await companyWithContract(t());
    await submitAccepted(t(), key, [usageEvent(contract.id, { event_id: 'seed, "quoted"' })]);
    const invoice = await invoiceFor(t(), key, contract.id);
    // More than one page (5,000 events), copied in the database from the one sent.
    await forCompany(t().app.db, companyId).query(
      `INSERT INTO usage_events (company_id, id, contract_id, metric, quantity, fee_amount, applied_rate, counterparty, counterparty_side,
                                 pair, rated_amount, rule_id, pricing_version, invoice_number, line_key, service_period_start,
                                 service_period_end, event_timestamp, ingested_at, status)
       SELECT company_id, 'copy-' || lpad(g::text, 5, '0'), contract_id, metric, quantity, fee_amount, applied_rate, counterparty,
              counterparty_side, pair, rated_amount, rule_id, pricing_version, invoice_number, line_key, service_period_start,
              service_period_end, event_timestamp, ingested_at, status
         FROM usage_events, generate_series(1, 6200) AS g
        WHERE company_id = $1 AND id = $2`,
      ['seed, "quoted"'],
    );
    const rows = await statement(t(), key, invoice.number);
    assert.equal(rows.length, 6201);
    assert.equal(rows[0]!.event_id, 'seed, "quoted"');
    assert.deepEqual(
      rows.slice(1).map((r) => r.event_id),
      Array.from({ length: 6200 }, (_, i) => `copy-${String(i + 1).padStart(5, "0")}`),
    );
  });

  it("writes text that a spreadsheet would run as a formula as text, with a leading ', and numbers as they are", async () => {
    const { key, companyId, contract } = await companyWithContract(t());
    const formulas = ['=HYPERLINK("http://x")', "@SUM(A1)", "+1", "-1+2"];
    await submitAccepted(
      t(),
      key,
      formulas.map((text) =>
        usageEvent(contract.id, {
          event_id: text,
          counterparty: text,
          counterparty_side: text,
          pair: text,
          quantity: "2.5",
        }),
      ),
    );
    // The API trims a scope's leading tab or carriage return (and refuses control characters in ids), so
    // those are stored here directly: the statement must not depend on every way in having checked them.
    for (const [id, text] of [
      ["tab", "\tcmd"],
      ["cr", "\rcmd"],
    ] as const) {
      await forCompany(t().app.db, companyId).query(
        `INSERT INTO usage_events (company_id, id, contract_id, metric, quantity, fee_amount, applied_rate, counterparty, counterparty_side,
                                   pair, rated_amount, rule_id, pricing_version, invoice_number, line_key, service_period_start,
                                   service_period_end, event_timestamp, ingested_at, status)
         SELECT company_id, $3, contract_id, metric, quantity, fee_amount, applied_rate, $4, $4, $4, rated_amount, rule_id, pricing_version,
                invoice_number, line_key, service_period_start, service_period_end, event_timestamp, ingested_at, status
           FROM usage_events WHERE company_id = $1 AND id = $2`,
        ["+1", id, text],
      );
    }
    const invoice = await invoiceFor(t(), key, contract.id);
    const rows = await statement(t(), key, invoice.number);
    const written = [...formulas, "\tcmd", "\rcmd"];
    assert.deepEqual(
      rows.map((r) => r.counterparty),
      written.map((text) => `'${text}`),
    );
    for (const r of rows) {
      for (const column of ["event_id", "counterparty", "counterparty_side", "pair"]) {
        assert.doesNotMatch(r[column]!, /^[=+\-@\t\r]/, `${column} of ${r.event_id} starts no formula`);
      }
      assert.equal(r.quantity, "2.5", "a number is written as it is");
    }
    assert.deepEqual(
      rows.slice(0, 4).map((r) => r.event_id),
      formulas.map((text) => `'${text}`),
    );
  });

  it("carries every line of the invoice and a total equal to the invoice's: subscription, usage and minimum", async () => {
    const { key, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { name: "Platform", type: "subscription", amount: "99.00" });
    await submitAccepted(t(), key, [
      usageEvent(contract.id, { quantity: 3 }),
      usageEvent(contract.id, { metric: "international_wire", quantity: 2 }),
    ]);
    const { number } = await invoiceFor(t(), key, contract.id);
    const issued = await t().call({ method: "POST", url: `${INVOICES}/${number}/finalize`, key });
    expectStatus(issued, 200);
    const invoice = issued.json();
    const rows = await statementRows(t(), key, number);
    assert.equal(rows.filter((r) => r.row_type === "event").length, 2);
    const lines = rows.filter((r) => r.row_type === "line");
    assert.deepEqual(
      lines.map((r) => [r.line_kind, r.description, r.amount]),
      invoice.line_items.map((l: { kind: string; description: string; amount: number }) => [
        l.kind,
        l.description,
        new Big(l.amount).toFixed(2),
      ]),
    );
    assert.deepEqual(
      lines.map((r) => r.line_kind),
      ["subscription", "usage", "usage", "minimum"],
      "the subscription, the usage and the minimum's true-up",
    );
    const total = rows.find((r) => r.row_type === "total")!;
    assert.equal(total.amount, new Big(invoice.total).toFixed(2));
    assert.equal(total.amount, "1000.00");
    const tax = rows.find((r) => r.row_type === "tax")!;
    assert.ok(
      lines
        .reduce((sum, r) => sum.plus(r.amount!), new Big(0))
        .plus(tax.amount!)
        .eq(total.amount!),
      "the lines and the tax add up to the total",
    );
  });

  it("answers the lines, tax and total only for an invoice without events, 404 for another company's, 401 without a key, 403 without invoices:read", async () => {
    const { key, companyId, contract } = await companyWithContract(t());
    await t().call({
      method: "POST",
      url: `${INVOICES}/project`,
      key,
      payload: {
        external_contract_id: contract.id,
        billing_period_start: "2026-05-01",
        billing_period_end: "2026-05-31",
      },
    });
    const may = await invoiceFor(t(), key, contract.id, "2026-05-01");
    assert.deepEqual(await statement(t(), key, may.number), []);
    const summary = await statementRows(t(), key, may.number);
    assert.deepEqual(
      summary.map((r) => [r.row_type, r.amount]),
      [
        ["line", "1000.00"],
        ["tax", "0.00"],
        ["total", "1000.00"],
      ],
    );
    const other = await t().newCompany();
    expectError(
      await t().call({ method: "GET", url: `${INVOICES}/${may.number}/usage.csv`, key: other.key }),
      404,
      "not_found",
    );
    expectError(await t().call({ method: "GET", url: `${INVOICES}/INV-999999/usage.csv`, key }), 404, "not_found");
    expectError(await t().call({ method: "GET", url: `${INVOICES}/${may.number}/usage.csv` }), 401);
    const usageOnly = await keyWithScopes(t(), companyId, ["usage:read"]);
    expectError(await t().call({ method: "GET", url: `${INVOICES}/${may.number}/usage.csv`, key: usageOnly }), 403);
  });
});
