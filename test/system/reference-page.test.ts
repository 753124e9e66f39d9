import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import type { Browser } from "playwright-core";
import { createApp, type App } from "../../src/app.js";
import { chromiumSkip, freePort, launchChromium } from "../support/chromium.js";
import { createMigratedTestDatabase, testConfig, type TestDatabase } from "../support/harness.js";

const skip = chromiumSkip;

describe("the API reference at /docs, in Chromium", { skip }, () => {
  let database: TestDatabase;
  let app: App;
  let browser: Browser;
  let base: string;
  let port: number;

  before(
    async () => {
      database = await createMigratedTestDatabase("pglite");
      // The public URL says localhost, on the port the service listens on; the page is also opened as 127.0.0.1.
      port = await freePort();
      app = await createApp(testConfig({ BILLING_PUBLIC_URL: `http://localhost:${port}` }), { db: database.db });
      base = await app.http.listen({ port, host: "127.0.0.1" });
      browser = await launchChromium();
    },
    { timeout: 60_000 },
  );

  after(async () => {
    await browser?.close();
    await app?.close();
    await database?.drop();
  });

  it("lists every operation of the served document, searches them, and asks nothing of another host", {
    timeout: 60_000,
  }, async () => {
    type Operation = { operationId: string; summary?: string; description?: string; tags?: string[] };
    type Operations = Record<string, Record<string, Operation>>;
    const spec = (await (await fetch(`${base}/v1/openapi.json`)).json()) as { paths: Operations; webhooks: Operations };
    // The API's operations and the webhooks it sends.
    const operations = [...Object.values(spec.paths), ...Object.values(spec.webhooks)].flatMap((methods) =>
      Object.values(methods).map((op) => op.operationId),
    );
    assert.ok(operations.length > 20, `${operations.length} operations`);

    const page = await browser.newPage();
    const elsewhere: string[] = [];
    const problems: string[] = [];
    page.on("request", (request) => {
      if (!request.url().startsWith(base) && !request.url().startsWith("data:")) elsewhere.push(request.url());
    });
    page.on("console", (message) => {
      if (message.type() === "error") problems.push(message.text());
    });
    page.on("pageerror", (error) => problems.push(error.message));
    const response = await page.goto(`${base}/docs`);
    assert.equal(response?.status(), 200);
    assert.match(response?.headers()["content-security-policy"] ?? "", /default-src 'none'/);

    // Every operation is on the page, under its operationId.
    await page.locator(".opblock").first().waitFor({ timeout: 20_000 });
    const shown = await page.locator(".opblock .opblock-summary-operation-id").allTextContents();
    assert.deepEqual([...shown].map((s) => s.trim()).sort(), [...operations].sort());

    // The filter finds operations by path or summary, not only by tag.
    // (The webhooks the service sends are listed below the operations, whatever the filter.)
    const webhooks = Object.values(spec.webhooks).flatMap((methods) =>
      Object.values(methods).map((op) => op.operationId),
    );
    const apiOperationsShown = async () =>
      (await page.locator(".opblock .opblock-summary-operation-id").allTextContents())
        .map((s) => s.trim())
        .filter((id) => !webhooks.includes(id))
        .sort();
    // What the filter should find, read from the document: the operations whose path, method, summary,
    // description, operationId or tag holds the phrase.
    const matching = (phrase: string) =>
      Object.entries(spec.paths)
        .flatMap(([path, methods]) =>
          Object.entries(methods)
            .filter(([method, op]) =>
              [path, method, op.summary, op.description, op.operationId, ...(op.tags ?? [])].some((v) =>
                (v ?? "").toLowerCase().includes(phrase),
              ),
            )
            .map(([, op]) => op.operationId),
        )
        .sort();
    for (const [phrase, mustFind] of [
      ["pricing-rules", ["addPricingRule", "updatePricingRule"]],
      ["contracts/upload", ["uploadContract"]],
    ] as const) {
      const expected = matching(phrase);
      for (const id of mustFind) assert.ok(expected.includes(id), `${phrase} finds ${id}`);
      assert.ok(expected.length < operations.length - webhooks.length, `${phrase} leaves operations out`);
      await page.locator(".operation-filter-input").fill(phrase);
      // Waits for the filtered list itself (two phrases can find as many operations: a count alone would pass early).
      await page.waitForFunction(
        (ids) =>
          [...document.querySelectorAll(".opblock .opblock-summary-operation-id")]
            .map((e) => (e.textContent ?? "").trim())
            .filter((id) => !ids.webhooks.includes(id))
            .sort()
            .join(",") === ids.expected.join(","),
        { expected, webhooks },
      );
      assert.deepEqual(await apiOperationsShown(), expected);
    }

    // An operation opens with its responses.
    await page.locator(".operation-filter-input").fill("submitUsage");
    await page.waitForFunction((count) => document.querySelectorAll(".opblock").length === count, 1 + webhooks.length);
    const submit = page.locator(".opblock", { hasText: "submitUsage" });
    await submit.locator(".opblock-summary-control").click();
    await submit.locator(".responses-table").first().waitFor();
    assert.match((await submit.locator(".opblock-body").textContent()) ?? "", /rate_limited/);

    assert.deepEqual(elsewhere, [], "no request leaves the machine");
    assert.deepEqual(problems, [], "no browser errors");
  });

  for (const host of ["127.0.0.1", "localhost"]) {
    it(`"Try it out" reaches the service from the page opened on ${host}, whatever host the public URL names`, {
      timeout: 60_000,
    }, async () => {
      const origin = `http://${host}:${port}`;
      const page = await browser.newPage();
      const blocked: string[] = [];
      page.on("console", (message) => {
        if (message.type() === "error" && /Content Security Policy|Refused to connect/i.test(message.text()))
          blocked.push(message.text());
      });
      await page.goto(`${origin}/docs`);
      await page.locator(".opblock").first().waitFor({ timeout: 20_000 });
      // The server Swagger UI calls is the origin the page came from: the only one its CSP lets it reach.
      const servers = await page.evaluate(
        () =>
          (
            window as unknown as { ui: { specSelectors: { specJson(): { toJS(): { servers: { url: string }[] } } } } }
          ).ui.specSelectors
            .specJson()
            .toJS().servers,
      );
      assert.deepEqual(
        servers.map((s) => s.url),
        [origin],
      );

      // What "Try it out" does: a fetch from the page to that server (listContracts without a key), answered by
      // the service (401), not blocked by the page's Content-Security-Policy.
      const answer = await page.evaluate(async (server) => {
        const res = await fetch(`${server}/v1/billing/contracts`);
        return { status: res.status, body: await res.json() };
      }, servers[0]!.url);
      assert.equal(answer.status, 401);
      assert.equal(answer.body.code, "missing_api_key");
      assert.deepEqual(blocked, [], "no request blocked by the page's Content-Security-Policy");
      await page.close();
    });
  }

  it("serves the page's assets itself and nothing else under /docs", async () => {
    for (const [file, type] of [
      ["swagger-ui-bundle.js", /javascript/],
      ["swagger-ui.css", /css/],
      ["reference.js", /javascript/],
    ] as const) {
      const res = await fetch(`${base}/docs/${file}`);
      assert.equal(res.status, 200, file);
      assert.match(res.headers.get("content-type") ?? "", type);
    }
    for (const file of ["package.json", "..%2Fpackage.json", "constructor", "index.html"]) {
      assert.equal((await fetch(`${base}/docs/${file}`)).status, 404, file);
    }
  });
});
