/**
 * The dashboard's overview, black-box over fastify.inject: this month's drafts per contract with the sums
 * per currency, the events-per-day chart, the latest invoices and failed webhook deliveries, and the
 * get-started steps of a brand-new company. "This month" and "the last 30 days" come from the service's
 * clock (the harness pins it at 2026-03-15T12:00Z), not from the test machine's.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine } from "../support/harness.js";
import { INVOICES, invoicesOf, project, submitAccepted, usageEvent, createEndpoint } from "../support/api.js";
import { dashboardCompany, sampleContract, tableRows } from "../support/dashboard-client.js";
import { closedPort } from "../support/webhook-receiver.js";

const MONTH_CAPTION = "Billed in March 2026 per contract";
const DAYS_CAPTION = "Usage events per day";

describeEachEngine(
  "dashboard overview",
  (t) => {
    it("welcomes a brand-new company with the get-started steps and an empty state for each section", async () => {
      const { client, key } = await dashboardCompany(t, { company: `<b>New</b> & "Co"` });
      const page = await client.get("/");
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<h1>Overview<\/h1>/);
      assert.match(page.body, /&lt;b&gt;New&lt;\/b&gt; &amp; &quot;Co&quot;/);
      assert.doesNotMatch(page.body, /<b>New<\/b>/);
      assert.match(page.body, /<h2 id="get-started">Get started<\/h2>/);
      assert.match(
        page.body,
        /<li><span class="badge ok">done<\/span> <a href="\/settings\/api-keys">Create an API key<\/a>/,
        "the key made by the test counts",
      );
      assert.match(page.body, /<li><span class="badge">to do<\/span> <a href="\/customers">Create a customer<\/a>/);
      assert.match(
        page.body,
        /<li><span class="badge">to do<\/span> Fill in your <a href="\/settings\/invoice-profile">invoice profile<\/a>/,
      );
      assert.match(
        page.body,
        /<li><span class="badge">to do<\/span> <a href="\/upload-contract">Upload a signed contract<\/a> \(a PDF\)/,
      );
      assert.match(page.body, /Send usage with <code>POST \/v1\/billing\/usage<\/code>/);
      assert.match(page.body, /Nothing billed in March 2026 yet/);
      assert.match(page.body, /No usage events with timestamps from 2026-02-14 to 2026-03-15/);
      assert.match(page.body, /No invoices yet/);
      assert.match(page.body, /No failed webhook deliveries/);
      assert.doesNotMatch(page.body, /<svg/);
      // The profile step is done once the profile names the seller and its address.
      const res = await t().call({
        method: "PATCH",
        url: "/v1/billing/account",
        key,
        payload: { legal_name: "New Co Ltd", address: "1 Main Street\nSpringfield" },
      });
      assert.equal(res.statusCode, 200, res.body);
      assert.match(
        (await client.get("/")).body,
        /<li><span class="badge ok">done<\/span> Fill in your <a href="\/settings\/invoice-profile">invoice profile<\/a>/,
      );
    });

    it("shows this month's draft per contract with links and totals, and the sum per currency", async () => {
      const { client, key } = await dashboardCompany(t);
      const a = await sampleContract(t, key, "Month A");
      const b = await sampleContract(t, key, "Month B");
      await submitAccepted(t(), key, [
        usageEvent(a.id, { quantity: 2 }),
        usageEvent(b.id, { metric: "international_wire" }),
      ]);
      // April's draft made in April (in March its event is timestamp_in_future), then March is "this month" again.
      t().clock.set(new Date("2026-04-02T12:00:00.000Z"));
      await submitAccepted(t(), key, [usageEvent(a.id, { timestamp: "2026-04-02T00:00:00.000Z" })]);
      t().clock.set(new Date("2026-03-15T12:00:00.000Z"));
      const marchA = (await invoicesOf(t(), key, a.id)).find((i) => i.billing_period.start === "2026-03-01")!;
      const marchB = (await invoicesOf(t(), key, b.id))[0]!;
      const page = await client.get("/");
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<h2 id="this-month">Billed this month \(March 2026\)<\/h2>/);
      const rows = tableRows(page.body, MONTH_CAPTION);
      assert.equal(rows.length, 2, "April's draft is not this month's");
      const rowA = rows.find((r) => r.includes(a.id))!;
      assert.match(rowA, new RegExp(`<a href="/contracts/${a.id}">${a.id}</a>`));
      assert.match(rowA, new RegExp(`<a href="/invoices/${marchA.number}">${marchA.number}</a>`));
      // A draft counts at what its month will bill: the sample's 1000.00 minimum, with its usage so far beside it.
      assert.match(
        rowA,
        /<td class="num">\$1,000\.00<span class="hint figure-note">projected · \$40\.00 so far<\/span><\/td><td>USD<\/td>/,
      );
      assert.match(rows.find((r) => r.includes(b.id))!, new RegExp(`${marchB.number}[\\s\\S]*\\$30\\.00 so far`));
      assert.match(
        page.body,
        /<h3>Total per currency<\/h3>\s*<ul class="totals"><li><strong>\$2,000\.00<\/strong> <span class="hint">over 2 invoices<\/span><\/li><\/ul>/,
      );
      assert.doesNotMatch(page.body, /id="get-started"/, "no get-started steps once something is billed");
    });

    it("counts this month's issued and paid invoices as billed, with drafts, and leaves void ones out (their reissue counts)", async () => {
      const { client, key } = await dashboardCompany(t);
      const act = async (number: string, verb: string) =>
        assert.equal((await t().call({ method: "POST", url: `${INVOICES}/${number}/${verb}`, key })).statusCode, 200);
      const numbers: Record<string, string> = {};
      for (const name of ["Draft", "Issued", "Paid", "Voided"]) {
        const contract = await sampleContract(t, key, `Billed ${name}`);
        numbers[name] = (await project(t(), key, contract.id)).number; // the sample's 1000.00 minimum
      }
      await act(numbers.Issued!, "finalize");
      await act(numbers.Paid!, "finalize");
      await act(numbers.Paid!, "pay");
      await act(numbers.Voided!, "finalize");
      await act(numbers.Voided!, "void");
      const page = await client.get("/");
      const rows = tableRows(page.body, MONTH_CAPTION);
      const shown = (status: string) => rows.find((r) => r.includes(numbers[status]!));
      // The void invoice was reissued: its draft replaces it on the month.
      assert.equal(rows.length, 4);
      assert.match(shown("Draft")!, /<td>draft<\/td>/);
      assert.match(shown("Issued")!, /<td>issued<\/td>/);
      assert.match(shown("Paid")!, /<td>paid<\/td>/);
      assert.equal(shown("Voided"), undefined, "a void invoice is not billed");
      assert.match(
        page.body,
        /<ul class="totals"><li><strong>\$4,000\.00<\/strong> <span class="hint">over 4 invoices<\/span><\/li><\/ul>/,
      );
    });

    it("charts events per UTC day over the last 30 days by the service's clock, with the numbers in a table", async () => {
      const { client, key } = await dashboardCompany(t);
      const contract = await sampleContract(t, key, "Chart Co");
      await submitAccepted(t(), key, [
        usageEvent(contract.id, { timestamp: "2026-03-15T00:00:00.000Z" }),
        usageEvent(contract.id, { timestamp: "2026-03-15T13:59:59+02:00" }),
        usageEvent(contract.id, { timestamp: "2026-03-20T10:00:00.000Z" }), // after today: not in the chart
      ]);
      const page = await client.get("/");
      assert.equal(page.statusCode, 200);
      assert.match(page.body, /<h2 id="events-per-day">Events per day, last 30 days<\/h2>/);
      const summary =
        "Bar chart of usage events per day from 2026-02-14 to 2026-03-15: 2 events in total, at most 2 events on 2026-03-15.";
      assert.ok(
        page.body.includes(`<svg viewBox="0 0 620 200" role="img" aria-label="${summary}"`),
        "an image with a summary for screen readers",
      );
      assert.ok(page.body.includes(`<title>${summary}</title>`));
      assert.equal((page.body.match(/<rect class="bar" /g) ?? []).length, 30, "one bar per day");
      assert.match(page.body, /<title>2026-03-15: 2 events<\/title>/);
      assert.match(page.body, /<title>2026-03-14: 0 events<\/title>/);
      assert.doesNotMatch(page.body, / style=/);
      const days = tableRows(page.body, DAYS_CAPTION);
      assert.equal(days.length, 30);
      assert.equal(days[0], `<td>2026-02-14</td><td class="num">0</td>`);
      assert.equal(days.at(-1), `<td>2026-03-15</td><td class="num">2</td>`);
      assert.match(page.body, /<details><summary>Show the numbers<\/summary>/);
    });

    it("lists the five latest invoices, newest first", async () => {
      const { client, key } = await dashboardCompany(t);
      const contract = await sampleContract(t, key, "Latest Co");
      // Sent in August, for the events up to August: in March they are timestamp_in_future. Then back to the session's day.
      t().clock.set(new Date("2026-08-20T12:00:00.000Z"));
      await submitAccepted(
        t(),
        key,
        ["03", "04", "05", "06", "07", "08"].map((m) =>
          usageEvent(contract.id, { timestamp: `2026-${m}-20T00:00:00.000Z` }),
        ),
      );
      t().clock.set(new Date("2026-03-15T12:00:00.000Z"));
      const invoices = await invoicesOf(t(), key, contract.id);
      assert.equal(invoices.length, 6);
      const page = await client.get("/");
      const rows = tableRows(page.body, "The five newest invoices");
      assert.deepEqual(
        rows.map((r) => /href="\/invoices\/([^"]+)"/.exec(r)![1]),
        invoices.slice(0, 5).map((i) => i.number),
      );
      assert.match(page.body, /<a href="\/invoices">All invoices<\/a>/);
    });

    it("lists failed webhook deliveries with links to the endpoint and the delivery, escaping the endpoint's address", async () => {
      const { client, key } = await dashboardCompany(t);
      const port = await closedPort();
      const endpoint = await createEndpoint(t(), key, { url: `http://127.0.0.1:${port}/hook?a=1&b=<x>` });
      const sent = await t().call({
        method: "POST",
        url: `/v1/webhook-endpoints/${endpoint.id}/test`,
        key,
        payload: { type: "customer.created" },
      });
      assert.equal(sent.statusCode, 200, sent.body);
      const deliveries = (
        await t().call({ method: "GET", url: `/v1/webhook-endpoints/${endpoint.id}/deliveries`, key })
      ).json().data;
      const delivery = deliveries[0];
      assert.equal(delivery.status, "failed");
      const page = await client.get("/");
      const rows = tableRows(page.body, "Failed webhook deliveries, newest first");
      assert.equal(rows.length, 1);
      assert.match(
        rows[0]!,
        new RegExp(`<a href="/webhooks/${endpoint.id}/deliveries/${delivery.id}"><code>customer\\.created</code></a>`),
      );
      assert.ok(
        rows[0]!.includes(
          `<a href="/webhooks/${endpoint.id}"><code>${endpoint.url.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")}</code></a>`,
        ),
        rows[0],
      );
      assert.match(rows[0]!, /class="badge bad">failed</);
      assert.doesNotMatch(page.body, /b=<x>/);
    });

    it("never shows another company's invoices, events or deliveries", async () => {
      const owner = await dashboardCompany(t);
      const contract = await sampleContract(t, owner.key, "Private Overview Co");
      await submitAccepted(t(), owner.key, [usageEvent(contract.id, { timestamp: "2026-03-15T06:00:00.000Z" })]);
      const [invoice] = await invoicesOf(t(), owner.key, contract.id);
      const other = await dashboardCompany(t);
      const page = await other.client.get("/");
      assert.equal(page.statusCode, 200);
      assert.doesNotMatch(page.body, new RegExp(`${contract.id}|${invoice!.number}`));
      assert.match(page.body, /Nothing billed in March 2026 yet/);
      assert.match(page.body, /No usage events with timestamps/);
      const mine = await owner.client.get("/");
      assert.match(mine.body, new RegExp(invoice!.number));
    });

    it("sends a signed-out browser to the login page", async () => {
      const { client } = await dashboardCompany(t);
      client.cookies.clear();
      const page = await client.get("/");
      assert.equal(page.statusCode, 303);
      assert.equal(page.headers.location, "/login");
    });
  },
  // The failed-delivery test sends to a closed port on 127.0.0.1.
  { env: { BILLING_WEBHOOK_ALLOW_PRIVATE: "true" } },
);
