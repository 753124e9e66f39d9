/**
 * The dashboard's figures on a phone and a desktop, by element geometry in Debian's Chromium (as
 * dashboard-browser.test.ts drives it): at 390 px and at 1280 px, over an invoice's page (a draft with a tiered
 * line, and an issued one), the invoice list and a contract's page, every invoice amount is visible without
 * scrolling sideways and no table is cut:
 *
 * - the document does not scroll sideways (scrollWidth <= clientWidth);
 * - every amount (a numeric table cell with text, a figure of the totals) lies inside the viewport, and no
 *   ancestor of it scrolls sideways (what a scroll hides is not visible);
 * - no table is wider than its container.
 *
 * Once on PGlite and once on PostgreSQL (when TEST_DATABASE_URL is set). Without /usr/bin/chromium the suite is
 * skipped with a message when CI is unset; with CI set it fails.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import type { Browser, Page } from "playwright-core";
import { chromiumSkip, launchChromium } from "../support/chromium.js";
import { createTestDatabase, postgresSkip } from "../support/harness.js";
import { serviceProcesses, type ServiceProcess } from "../support/service-process.js";

const skipAll = chromiumSkip;

const WIDTHS = [
  { width: 390, height: 844 },
  { width: 1280, height: 800 },
] as const;

/** What is wrong with the page's geometry, in words; empty when every amount shows and no table is cut. */
async function geometryProblems(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const problems: string[] = [];
    const root = document.documentElement;
    if (root.scrollWidth > root.clientWidth)
      problems.push(`the page scrolls sideways: ${root.scrollWidth} px wide in ${root.clientWidth} px`);
    const name = (el: Element) => `${el.tagName.toLowerCase()} "${(el.textContent ?? "").trim().slice(0, 40)}"`;
    const amounts = [...document.querySelectorAll("td.num, dl.figures dd")].filter(
      (el) => (el.textContent ?? "").trim() !== "",
    );
    if (amounts.length === 0) problems.push("no amount on the page");
    for (const el of amounts) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.height === 0) problems.push(`${name(el)} is not shown`);
      else if (box.left < 0 || box.right > window.innerWidth + 0.5)
        problems.push(`${name(el)} lies outside the viewport (${Math.round(box.left)} to ${Math.round(box.right)} px)`);
      for (let up = el.parentElement; up; up = up.parentElement) {
        if (up.scrollWidth > up.clientWidth + 1 && getComputedStyle(up).overflowX !== "visible")
          problems.push(`${name(el)} is in ${up.tagName.toLowerCase()}.${up.className}, which scrolls sideways`);
      }
    }
    for (const table of document.querySelectorAll("table")) {
      const container = table.parentElement!;
      const width = table.getBoundingClientRect().width;
      if (width > container.clientWidth + 1)
        problems.push(
          `table "${table.caption?.textContent ?? ""}" is ${Math.round(width)} px wide in ${container.clientWidth} px`,
        );
    }
    return problems;
  });
}

describe("dashboard figures by geometry", { concurrency: 2 }, () => {
  for (const engine of ["pglite", "postgres"] as const) {
    const skip = skipAll || postgresSkip(engine);

    describe(`amounts and tables at 390 and 1280 px [${engine}]`, { skip, concurrency: 1 }, () => {
      const procs = serviceProcesses();
      const who = {
        email: `geometry-${randomBytes(3).toString("hex")}@example.com`,
        password: "correct horse battery staple",
        key: `sk_test_geometry_${randomBytes(8).toString("hex")}`,
      };
      let service: ServiceProcess;
      let browser: Browser;
      let page: Page;
      let dataDir: string | undefined;
      let dropDatabase: (() => Promise<void>) | undefined;
      const paths: Record<string, string> = {};

      /** A JSON call to the API with the bootstrap key; asserts a 2xx answer. */
      async function api(path: string, body?: unknown): Promise<any> {
        const res = await fetch(`${service.base}${path}`, {
          method: body === undefined ? "GET" : "POST",
          headers: {
            authorization: `Bearer ${who.key}`,
            ...(body === undefined ? {} : { "content-type": "application/json" }),
          },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        });
        const text = await res.text();
        assert.ok(res.ok, `${path}: ${res.status} ${text}`);
        return JSON.parse(text);
      }

      before(
        async () => {
          const storage: Record<string, string> = {};
          if (engine === "pglite") {
            dataDir = mkdtempSync(join(tmpdir(), "billing-geometry-"));
            storage.BILLING_DATA_DIR = dataDir;
          } else {
            const database = await createTestDatabase("postgres");
            if (database.storage.kind !== "postgres") throw new Error("expected PostgreSQL");
            storage.DATABASE_URL = database.storage.url;
            dropDatabase = () => database.drop();
          }
          service = await procs.start(
            {
              ...storage,
              BILLING_BOOTSTRAP_COMPANY: "Geometry Payments International Holdings",
              BILLING_BOOTSTRAP_API_KEY: who.key,
              BILLING_BOOTSTRAP_EMAIL: who.email,
              BILLING_BOOTSTRAP_PASSWORD: who.password,
            },
            { readyTimeoutMs: 90_000 },
          );
          // Long names and large figures: what widens a table first.
          const customer = await api("/v1/billing/customers", {
            name: "Globex Corporation International Holdings and Subsidiaries",
          });
          const contract = await api("/v1/billing/contracts", { customer_id: customer.id });
          const rules = `/v1/billing/contracts/${encodeURIComponent(contract.id)}/pricing-rules`;
          await api(rules, { type: "subscription", name: "Platform fee", amount: "12500.00" });
          await api(rules, {
            type: "usage",
            metric: "card_volume_processed_in_the_united_kingdom",
            name: "Card volume processed in the United Kingdom",
            model: "graduated",
            tiers: [
              { up_to: "1000000", unit_amount: "0.0123456789" },
              { up_to: null, unit_amount: "0.0098765432" },
            ],
            monthly_cap: "987654.32",
          });
          await api(rules, {
            type: "usage",
            metric: "fx_conversion",
            name: "FX conversion",
            model: "percentage",
            rate: "0.0235",
            counterparty: "bank-of-somewhere-with-a-very-long-name",
          });
          const now = new Date().toISOString();
          const event = (metric: string, quantity: string) => ({
            external_contract_id: contract.id,
            event_id: `geometry-${randomBytes(6).toString("hex")}`,
            metric,
            quantity,
            timestamp: now,
          });
          await api("/v1/billing/usage", {
            events: [
              event("card_volume_processed_in_the_united_kingdom", "123456789.5"),
              event("domestic_wire", "123456"),
              event("international_wire", "7"),
            ],
          });
          const [draft] = (await api(`/v1/billing/invoices?contract=${encodeURIComponent(contract.id)}`)).data;
          // A second contract's invoice, issued: it owes its total.
          const second = await api("/v1/billing/contracts", { customer_id: customer.id });
          await api("/v1/billing/usage", {
            events: [{ ...event("domestic_wire", "99999"), external_contract_id: second.id }],
          });
          const [other] = (await api(`/v1/billing/invoices?contract=${encodeURIComponent(second.id)}`)).data;
          await api(`/v1/billing/invoices/${other.number}/finalize`, {});
          paths.draft = `/invoices/${draft.number}`;
          paths.issued = `/invoices/${other.number}`;
          paths.list = "/invoices";
          paths.contract = `/contracts/${encodeURIComponent(contract.id)}`;

          browser = await launchChromium();
          const context = await browser.newContext({ baseURL: service.base, viewport: WIDTHS[1] });
          // tsx (esbuild, keepNames) wraps named functions in page.evaluate callbacks in __name(...).
          await context.addInitScript({ content: "globalThis.__name = globalThis.__name || ((fn) => fn);" });
          context.setDefaultTimeout(10_000);
          context.setDefaultNavigationTimeout(15_000);
          page = await context.newPage();
          await page.goto("/login");
          await page.getByLabel("Email").fill(who.email);
          await page.getByLabel(/^Password/).fill(who.password);
          await Promise.all([
            page.waitForURL((url) => url.pathname === "/"),
            page.getByRole("button", { name: /Sign in|Log in/ }).click(),
          ]);
        },
        { timeout: 180_000 },
      );

      after(
        async () => {
          await browser?.close().catch(() => {});
          if (service) await procs.kill(service);
          if (dataDir) rmSync(dataDir, { recursive: true, force: true });
          await dropDatabase?.();
        },
        { timeout: 60_000 },
      );

      for (const viewport of WIDTHS) {
        for (const [name, label] of [
          ["draft", "a draft invoice's page"],
          ["issued", "an issued invoice's page"],
          ["list", "the invoice list"],
          ["contract", "a contract's page"],
        ] as const) {
          it(`${label} at ${viewport.width} px: every amount shows, no table is cut`, { timeout: 60_000 }, async () => {
            await page.setViewportSize(viewport);
            const response = await page.goto(paths[name]!);
            assert.equal(response?.status(), 200, paths[name]);
            assert.deepEqual(await geometryProblems(page), []);
          });
        }
      }

      it("shows a draft's projected month and an issued invoice's amount due", { timeout: 60_000 }, async () => {
        await page.setViewportSize(WIDTHS[0]);
        await page.goto(paths.draft!);
        await assert.doesNotReject(page.getByRole("heading", { name: "This month if nothing else arrives" }).waitFor());
        await assert.doesNotReject(page.getByText("Projected total").waitFor());
        await page.goto(paths.issued!);
        await assert.doesNotReject(page.getByText("Amount due", { exact: true }).first().waitFor());
      });
    });
  }
});
