/**
 * The hosted invoice page in Chromium (docs/decisions.md, "Invoice documents"): an issued invoice with long line
 * names, large amounts, a payment and a credit note, loaded at 390 px and at 1280 px wide. Measured by element
 * geometry: the page never scrolls sideways, the line table's box neither, and every amount (each line's and each
 * total's) ends inside the viewport. Screenshots under test-results/hosted-page/.
 */
import assert from "node:assert/strict";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { createApp, type App } from "../../src/app.js";
import { createMigratedTestDatabase, testConfig, type TestDatabase } from "../support/harness.js";
import { chromiumSkip, freePort, launchChromium } from "../support/chromium.js";
import { REPO_ROOT } from "../support/service-process.js";

const KEY = "sk_test_hosted_page_0123456789";
const SHOTS = join(REPO_ROOT, "test-results", "hosted-page");

const skip = chromiumSkip;

describe("the hosted invoice page in Chromium, at 390 and 1280 px", { skip }, () => {
  let database: TestDatabase;
  let app: App;
  let browser: Browser;
  let base: string;
  let hostedPath: string;

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${KEY}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const answer = (await res.json()) as any;
    assert.ok(res.status < 300, `${method} ${path}: ${res.status} ${JSON.stringify(answer)}`);
    return answer;
  };

  before(
    async () => {
      database = await createMigratedTestDatabase("pglite");
      const port = await freePort();
      app = await createApp(
        testConfig({
          BILLING_PUBLIC_URL: `http://127.0.0.1:${port}`,
          BILLING_BOOTSTRAP_COMPANY: "Northwind Payments",
          BILLING_BOOTSTRAP_API_KEY: KEY,
        }),
        { db: database.db },
      );
      base = await app.http.listen({ port, host: "127.0.0.1" });
      browser = await launchChromium();

      await api("PATCH", "/v1/billing/account", {
        legal_name: "Northwind Payments International Settlement Services Ltd",
        address: "1 Harbour Road\nDublin D02 X285\nIreland",
        tax_id: "IE1234567T",
        payment_instructions: "SEPA transfer to IE29 AIBK 9311 5212 3456 78, BIC AIBKIE2D, quoting the invoice number",
      });
      const customer = await api("POST", "/v1/billing/customers", {
        name: "Globex Corporation Worldwide Holdings",
        external_id: "globex",
        payment_terms_days: 30,
      });
      const contract = await api("POST", "/v1/billing/contracts", { customer_id: customer.id });
      await api("POST", `/v1/billing/contracts/${contract.id}/pricing-rules`, {
        name: "International wire transfers to correspondent banks outside the European Economic Area",
        type: "usage",
        metric: "correspondent_wire",
        model: "flat",
        amount: "987654.321",
      });
      await api("POST", `/v1/billing/contracts/${contract.id}/pricing-rules`, {
        name: "Card volume",
        type: "usage",
        metric: "card_volume",
        model: "percentage",
        rate: "0.029",
        fixed_fee: "0.30",
        monthly_cap: "5000",
      });
      const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
      await api("POST", "/v1/billing/usage", {
        events: [
          {
            external_contract_id: contract.id,
            event_id: "w-1",
            metric: "correspondent_wire",
            quantity: 1234,
            timestamp: now,
          },
          {
            external_contract_id: contract.id,
            event_id: "c-1",
            metric: "card_volume",
            quantity: "191769.99",
            timestamp: now,
          },
          { external_contract_id: contract.id, event_id: "d-1", metric: "domestic_wire", quantity: 3, timestamp: now },
        ],
      });
      const invoices = await api("GET", `/v1/billing/invoices?contract=${contract.id}`);
      const number = invoices.data[0].number as string;
      const issued = await api("POST", `/v1/billing/invoices/${number}/finalize`);
      await api("POST", `/v1/billing/invoices/${number}/payments`, {
        amount: "123456789.01",
        method: "wire",
        reference: "SWIFT-MT103-2026-000000123456",
      });
      await api("POST", `/v1/billing/invoices/${number}/credit-notes`, { amount: "75.00", reason: "Goodwill" });
      hostedPath = new URL(issued.hosted_url).pathname;
      mkdirSync(SHOTS, { recursive: true });
    },
    { timeout: 120_000 },
  );

  after(async () => {
    await browser?.close();
    await app?.close();
    await database?.drop();
  });

  for (const viewport of [
    { width: 390, height: 844 },
    { width: 1280, height: 800 },
  ]) {
    it(`fits ${viewport.width} px: no sideways scrolling, every amount inside the viewport`, {
      timeout: 60_000,
    }, async () => {
      const page = await browser.newPage({ viewport });
      const problems: string[] = [];
      page.on("console", (message) => {
        // A 404 is reported below with its URL (the browser asks for /favicon.ico by itself).
        if (message.type() === "error" && !message.text().startsWith("Failed to load resource"))
          problems.push(message.text());
      });
      page.on("response", (answer) => {
        if (answer.status() >= 400 && !answer.url().endsWith("/favicon.ico"))
          problems.push(`${answer.status()} ${answer.url()}`);
      });
      const response = await page.goto(`${base}${hostedPath}`);
      assert.equal(response?.status(), 200);
      await page.screenshot({ path: join(SHOTS, `${viewport.width}.png`), fullPage: true });
      const geometry = await page.evaluate(() => {
        const root = document.scrollingElement ?? document.documentElement;
        const box = document.querySelector(".lines-box") as HTMLElement | null;
        const amounts = [...document.querySelectorAll("table.lines td.amount, dl.totals dd")].map((cell) => {
          const rect = cell.getBoundingClientRect();
          return { text: (cell.textContent ?? "").trim(), left: rect.left, right: rect.right };
        });
        return {
          page: { scrollWidth: root.scrollWidth, clientWidth: root.clientWidth },
          box: box && { scrollWidth: box.scrollWidth, clientWidth: box.clientWidth },
          viewport: window.innerWidth,
          amounts,
        };
      });
      assert.ok(
        geometry.page.scrollWidth <= geometry.page.clientWidth,
        `the page scrolls sideways: ${JSON.stringify(geometry.page)}`,
      );
      assert.ok(geometry.box, "the line table is in its box");
      assert.ok(
        geometry.box.scrollWidth <= geometry.box.clientWidth,
        `the line table overflows its box: ${JSON.stringify(geometry.box)}`,
      );
      assert.ok(geometry.amounts.length >= 8, `amounts found: ${JSON.stringify(geometry.amounts)}`);
      const outside = geometry.amounts.filter((a) => a.text !== "" && (a.right > geometry.viewport || a.left < 0));
      assert.deepEqual(outside, [], `amounts outside the ${geometry.viewport} px viewport`);
      for (const figure of ["$1,218,765,432.11", "-$123,456,789.01", "-$75.00"])
        assert.ok(
          geometry.amounts.some((a) => a.text === figure),
          `${figure} among ${geometry.amounts.map((a) => a.text).join(" | ")}`,
        );
      assert.deepEqual(problems, [], "no browser errors (a CSP refusal among them)");
      await page.close();
    });
  }
});
