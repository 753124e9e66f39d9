/**
 * The dashboard's usage pages, black-box over fastify.inject: the filterable, paginated event list and the
 * event detail with the rule and rate applied; and the refusals (a bad filter, another company's event).
 * Events are sent through the public API with a key the company made on its Settings page.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine } from "../support/harness.js";
import { MARCH, getEvent, getPricing, invoicesOf, submitAccepted, updateRule, usageEvent } from "../support/api.js";
import { assertAlert, dashboardCompany, fieldErrorOf, sampleContract, tableRows } from "../support/dashboard-client.js";

const CAPTION = "Usage events, newest first";

describeEachEngine("dashboard usage pages", (t) => {
  it("lists a company's events newest first with links, amounts, status and timestamp, escaping what the client sent", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Usage List Co");
    await submitAccepted(t(), key, [
      usageEvent(contract.id, { event_id: "evt-first", quantity: 2 }),
      usageEvent(contract.id, {
        event_id: `<img src=x onerror="alert(1)">&'`,
        metric: "international_wire",
        timestamp: "2026-03-21T08:30:00.000Z",
      }),
    ]);
    const page = await client.get("/usage");
    assert.equal(page.statusCode, 200);
    const rows = tableRows(page.body, CAPTION);
    assert.equal(rows.length, 2);
    assert.ok(rows[0]!.includes(`href="/usage/%3Cimg%20src%3Dx%20onerror%3D%22alert(1)%22%3E%26&#39;"`), rows[0]);
    const detail = await client.get("/usage/%3Cimg%20src%3Dx%20onerror%3D%22alert(1)%22%3E%26'");
    assert.equal(detail.statusCode, 200, "the link leads to the event");
    assert.match(rows[0]!, /<code>&lt;img src=x onerror=&quot;alert\(1\)&quot;&gt;&amp;&#39;<\/code>/);
    assert.doesNotMatch(page.body, /<img src=x/);
    assert.match(rows[0]!, /<code>international_wire<\/code>/);
    assert.match(rows[0]!, /\$30\.00/);
    assert.match(rows[0]!, /<time datetime="2026-03-21T08:30:00.000Z">2026-03-21 08:30 UTC<\/time>/);
    assert.match(rows[1]!, /href="\/usage\/evt-first"/);
    assert.match(rows[1]!, new RegExp(`href="/contracts/${contract.id}">${contract.id}</a>`));
    assert.match(rows[1]!, /<td class="num">2<\/td>/);
    assert.match(rows[1]!, /\$40\.00/);
    assert.match(rows[1]!, /class="badge ok">rated</);
    assert.match(page.body, /<label for="usage-contract">Contract<\/label>/);
    assert.match(page.body, /<label for="usage-from">Service period from<\/label>/);
  });

  it("says there are no events yet on a new company's page, and points to an API key", async () => {
    const { client } = await dashboardCompany(t);
    const page = await client.get("/usage");
    assert.equal(page.statusCode, 200);
    assert.match(page.body, /class="empty"><p>No usage events yet/);
    assert.match(page.body, /href="\/settings\/api-keys"/);
    assert.equal(tableRows(page.body, CAPTION).length, 0);
  });

  it("filters by contract, metric, status and service period, keeping the filters in the form", async () => {
    const { client, key } = await dashboardCompany(t);
    const a = await sampleContract(t, key, "Filter A");
    const b = await sampleContract(t, key, "Filter B");
    // Sent in April, for April's event: in March it is timestamp_in_future. Then back to the session's day.
    t().clock.set(new Date("2026-04-15T12:00:00.000Z"));
    await submitAccepted(t(), key, [
      usageEvent(a.id, { event_id: "a-dom-march" }),
      usageEvent(a.id, { event_id: "a-intl-march", metric: "international_wire" }),
      usageEvent(a.id, { event_id: "a-dom-april", timestamp: "2026-04-02T00:00:00.000Z" }),
      usageEvent(b.id, { event_id: "b-dom-march" }),
    ]);
    t().clock.set(new Date("2026-03-15T12:00:00.000Z"));
    const ids = async (query: string) => {
      const page = await client.get(`/usage?${query}`);
      assert.equal(page.statusCode, 200, page.body.slice(0, 1000));
      return tableRows(page.body, CAPTION)
        .map((row) => /href="\/usage\/([^"]+)"/.exec(row)![1])
        .sort();
    };
    assert.deepEqual(await ids(`contract=${a.id}`), ["a-dom-april", "a-dom-march", "a-intl-march"]);
    assert.deepEqual(await ids(`contract=${a.id}&metric=domestic_wire`), ["a-dom-april", "a-dom-march"]);
    assert.deepEqual(await ids(`contract=${a.id}&from=2026-04-01&to=2026-04-30`), ["a-dom-april"]);
    assert.deepEqual(await ids("status=accepted"), []);
    assert.deepEqual(
      await ids("contract=&metric=&status=rated&from=&to=").then((list) => list.length),
      4,
      "blank fields are no filter",
    );
    const page = await client.get(`/usage?contract=${b.id}&metric=domestic_wire`);
    assert.match(page.body, new RegExp(`<option value="${b.id}" selected>`));
    assert.match(page.body, /id="usage-metric" name="metric" type="text" maxlength="100" value="domestic_wire"/);
    assert.match(page.body, /href="\/usage">Clear filters<\/a>/);
    const none = await client.get("/usage?metric=no_such_metric");
    assert.equal(none.statusCode, 200);
    assert.match(none.body, /No usage events match these filters/);
  });

  it("pages through events with a next-page link that keeps the filters", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Pager Co");
    await submitAccepted(
      t(),
      key,
      Array.from({ length: 30 }, (_, i) => usageEvent(contract.id, { event_id: `page-${String(i).padStart(2, "0")}` })),
    );
    const first = await client.get(`/usage?contract=${contract.id}`);
    const firstRows = tableRows(first.body, CAPTION);
    assert.equal(firstRows.length, 25);
    const next = /<a href="([^"]+)" rel="next">Next page<\/a>/.exec(first.body)?.[1]?.replaceAll("&amp;", "&");
    assert.ok(next, "a next-page link");
    assert.match(next, new RegExp(`contract=${contract.id}`));
    assert.match(next, /starting_after=page-05/);
    const second = await client.get(next);
    assert.equal(second.statusCode, 200);
    const secondRows = tableRows(second.body, CAPTION);
    assert.equal(secondRows.length, 5);
    assert.doesNotMatch(second.body, /rel="next"/);
    assert.match(second.body, /First page<\/a>/);
  });

  it("answers a bad filter or cursor with a 400 page and an alert instead of a list", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Bad Filter Co");
    await submitAccepted(t(), key, [usageEvent(contract.id)]);
    const badDate = await client.get("/usage?from=2026-02-30");
    assertAlert(badDate, 400, /^One field needs your attention/);
    assert.equal(fieldErrorOf(badDate.body, "usage-from"), "Enter a real date, as YYYY-MM-DD.");
    assert.equal(tableRows(badDate.body, CAPTION).length, 0);
    assert.match(badDate.body, /id="usage-from" name="from" type="date" value="2026-02-30"/);
    const badStatus = await client.get("/usage?status=billed");
    assertAlert(badStatus, 400, /^One field needs your attention/);
    assert.match(fieldErrorOf(badStatus.body, "usage-status") ?? "", /^Choose one of accepted, rated, voided\.$/);
    assertAlert(await client.get("/usage?starting_after=no-such-event"), 400, /starting_after/);
  });

  it("explains a 'from' after 'to' beside the field instead of showing an empty list", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Reversed Range Co");
    await submitAccepted(t(), key, [usageEvent(contract.id)]);
    for (const [from, to] of [
      ["2026-05-01", "2026-03-01"],
      ["2026-03-20", "2026-03-10"],
    ]) {
      const page = await client.get(`/usage?contract=${contract.id}&from=${from}&to=${to}`);
      assertAlert(page, 400, /^One field needs your attention: see the message beside it\.$/);
      assert.equal(fieldErrorOf(page.body, "usage-from"), "'From' must be on or before 'To'.");
      assert.equal(fieldErrorOf(page.body, "usage-to"), undefined);
      assert.equal(tableRows(page.body, CAPTION).length, 0);
      assert.doesNotMatch(page.body, /No usage events match these filters/);
      assert.match(
        page.body,
        new RegExp(`id="usage-from" name="from" type="date" value="${from}"`),
        "what was typed is shown back",
      );
      assert.match(page.body, new RegExp(`id="usage-to" name="to" type="date" value="${to}"`));
    }
    const sameDay = await client.get(`/usage?from=2026-03-10&to=2026-03-10`);
    assert.equal(sameDay.statusCode, 200);
    assert.equal(tableRows(sameDay.body, CAPTION).length, 1);
  });

  it("shows an event with everything the API shows and the rule and rate that priced it", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Detail <b>Co</b>");
    await submitAccepted(t(), key, [
      usageEvent(contract.id, { event_id: "detail/1?x#y", quantity: 3, counterparty: "<bank>", timestamp: MARCH }),
    ]);
    const api = (
      await t().call({ method: "GET", url: `/v1/billing/usage/${encodeURIComponent("detail/1?x#y")}`, key })
    ).json();
    const page = await client.get(`/usage/${encodeURIComponent("detail/1?x#y")}`);
    assert.equal(page.statusCode, 200, page.body.slice(0, 1000));
    assert.match(page.body, /<h1>Usage event detail\/1\?x#y<\/h1>/);
    assert.match(
      page.body,
      new RegExp(
        `<dt>Contract</dt><dd><a href="/contracts/${contract.id}">${contract.id}</a> <span class="hint">\\(Detail &lt;b&gt;Co&lt;/b&gt;\\)</span>`,
      ),
    );
    assert.match(page.body, /<dt>Quantity<\/dt><dd>3<\/dd>/);
    assert.match(page.body, /<dt>Counterparty<\/dt><dd>&lt;bank&gt;<\/dd>/);
    assert.match(page.body, /<dt>Amount<\/dt><dd>\$60\.00<\/dd>/);
    assert.match(
      page.body,
      new RegExp(`<dt>Invoice</dt><dd><a href="/invoices/${api.invoice_number}">${api.invoice_number}</a>`),
    );
    assert.match(page.body, /<dt>Service period<\/dt><dd>2026-03-01 to 2026-03-31<\/dd>/);
    assert.match(page.body, /<dt>Timestamp<\/dt><dd><time datetime="2026-03-20T10:00:00.000Z">/);
    assert.match(page.body, new RegExp(`<dt>Received</dt><dd><time datetime="${api.ingested_at}">`));
    assert.match(page.body, new RegExp(`<dt>Rule</dt><dd>Domestic wire <code>${api.rule_id}</code></dd>`));
    assert.match(page.body, /<dt>Rule price<\/dt><dd>\$20\.00 per unit<\/dd>/);
    assert.match(page.body, /<dt>Program version<\/dt><dd>1 <span class="hint">\(the current version\)<\/span><\/dd>/);
    assert.match(page.body, /<dt>Rate applied<\/dt><dd>\$20\.00 per unit<\/dd>/);
    assert.doesNotMatch(page.body, /<b>Co<\/b>|<bank>/);
  });

  it("shows a tiny quantity and its charge in plain decimals, every digit kept, not in exponent notation", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Tiny Co");
    // 1e-8 units at 20.00: the API answers 1e-8 and 2e-7 as JSON numbers, which String() writes with an exponent.
    await submitAccepted(t(), key, [usageEvent(contract.id, { event_id: "tiny", quantity: 1e-8 })]);
    const rows = tableRows((await client.get("/usage")).body, CAPTION);
    assert.match(rows[0]!, /<td class="num">0\.00000001<\/td><td class="num">\$0\.0000002<\/td>/);
    const page = await client.get("/usage/tiny");
    assert.match(page.body, /<dt>Quantity<\/dt><dd>0\.00000001<\/dd>/);
    assert.match(page.body, /<dt>Amount<\/dt><dd>\$0\.0000002<\/dd>/);
    assert.doesNotMatch(page.body, /\de-\d/);
  });

  it("names the rule of the version an event was rated with after the contract's pricing changed", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Versioned Co");
    await submitAccepted(t(), key, [usageEvent(contract.id, { event_id: "before-change" })]);
    const rule = (await getPricing(t(), key, contract.id)).rules.find((r) => r.metric === "domestic_wire")!;
    await updateRule(t(), key, contract.id, rule.id, { name: "Domestic wire, new price", amount: "25.00" });
    await submitAccepted(t(), key, [usageEvent(contract.id, { event_id: "after-change" })]);
    const before = await client.get("/usage/before-change");
    assert.match(before.body, /<dt>Rule<\/dt><dd>Domestic wire <code>/);
    assert.match(
      before.body,
      /<dt>Program version<\/dt><dd>1 <span class="hint">\(the contract is now at version 2\)<\/span>/,
    );
    assert.match(before.body, /<dt>Rate applied<\/dt><dd>\$20\.00 per unit<\/dd>/);
    const after = await client.get("/usage/after-change");
    assert.match(after.body, /<dt>Rule<\/dt><dd>Domestic wire, new price <code>/);
    assert.match(after.body, /<dt>Program version<\/dt><dd>2 <span class="hint">\(the current version\)/);
    assert.match(after.body, /<dt>Amount<\/dt><dd>\$25\.00<\/dd>/);
  });

  it("calls the version in force today current while a later version is only scheduled", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Scheduled Co");
    await submitAccepted(t(), key, [usageEvent(contract.id, { event_id: "priced-today" })]);
    const rule = (await getPricing(t(), key, contract.id)).rules.find((r) => r.metric === "domestic_wire")!;
    await updateRule(t(), key, contract.id, rule.id, { amount: "25.00", effective_date: "2026-04-01" });
    const page = await client.get("/usage/priced-today");
    assert.match(page.body, /<dt>Program version<\/dt><dd>1 <span class="hint">\(the current version\)<\/span>/);
    assert.match(page.body, /<dt>Amount<\/dt><dd>\$20\.00<\/dd>/);
  });

  it("answers an unknown event id, or another company's, with a 404 page and shows nothing of it", async () => {
    const owner = await dashboardCompany(t);
    const contract = await sampleContract(t, owner.key, "Private Usage Co");
    await submitAccepted(t(), owner.key, [usageEvent(contract.id, { event_id: "private-event" })]);
    const other = await dashboardCompany(t);
    const theirs = await other.client.get("/usage/private-event");
    assertAlert(theirs, 404, /does not exist/);
    assert.doesNotMatch(theirs.body, new RegExp(contract.id));
    assertAlert(await other.client.get("/usage/no-such-event"), 404, /does not exist/);
    const list = await other.client.get("/usage");
    assert.doesNotMatch(list.body, /private-event/);
    assert.match(list.body, /No usage events yet/);
    const filtered = await other.client.get(`/usage?contract=${contract.id}`);
    assert.equal(filtered.statusCode, 200);
    assert.doesNotMatch(filtered.body, /private-event/);
  });

  it("voids an event of a draft from its page: the event shows when and why, and its draft line loses it", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Void Co");
    await submitAccepted(t(), key, [
      usageEvent(contract.id, { event_id: "keep-me", quantity: 1 }),
      usageEvent(contract.id, { event_id: "void-me", quantity: 2 }),
    ]);
    const [invoice] = await invoicesOf(t(), key, contract.id);
    const domesticLine = async () =>
      tableRows(
        (await client.get(`/invoices/${invoice!.number}`)).body,
        `Line items of invoice ${invoice!.number}`,
      ).find((row) => row.includes("domestic_wire"));
    assert.match(
      (await domesticLine()) ?? "",
      /<td class="num">3<\/td><td class="num">\$20\.00<\/td><td class="num">\$60\.00<\/td>/,
    );

    const before = await client.get("/usage/void-me");
    assert.match(before.body, /<summary><strong>Void this event<\/strong><\/summary>/);
    assert.match(before.body, /<form class="stack" method="post" action="\/usage\/void-me\/void">/);
    assert.match(before.body, /<label for="void-reason">Reason <span class="hint">\(optional, at most 500 characters/);
    assert.match(before.body, /id="void-reason" name="reason" type="text" maxlength="500"/);

    const forged = await client.post("/usage/void-me/void", { reason: "no token" }, { csrf: null });
    assert.equal(forged.statusCode, 403);
    assert.equal((await getEvent(t(), key, "void-me")).status, "rated", "nothing voided without the form token");
    const voided = await client.post("/usage/void-me/void", { reason: "Sent twice <by mistake>" });
    assert.equal(voided.statusCode, 303, voided.body.slice(0, 1000));
    assert.equal(voided.headers.location, "/usage/void-me?done=voided");
    const after = await client.get(String(voided.headers.location));
    assert.equal(after.statusCode, 200);
    assert.match(after.body, /role="status">Event voided: it is no longer billed/);
    assert.match(after.body, /<dt>Status<\/dt><dd><span class="badge warn">voided<\/span><\/dd>/);
    assert.match(
      after.body,
      /<dt>Voided<\/dt><dd>Voided on <time datetime="[^"]+">2026-03-15 12:00 UTC<\/time> — Sent twice &lt;by mistake&gt;<\/dd>/,
    );
    assert.doesNotMatch(after.body, /action="\/usage\/void-me\/void"/, "a voided event has no void form");
    assert.match(
      after.body,
      /<dt>Amount<\/dt><dd>\$40\.00 <span class="hint">\(as rated; voided, so no longer billed\)<\/span>/,
    );
    assert.match(
      (await domesticLine()) ?? "",
      /<td class="num">1<\/td><td class="num">\$20\.00<\/td><td class="num">\$20\.00<\/td>/,
      "the draft's line is priced again without the event",
    );
    const listed = tableRows((await client.get("/usage?status=voided")).body, CAPTION);
    assert.equal(listed.length, 1);
    assert.match(listed[0]!, /href="\/usage\/void-me"/);
    assert.match(listed[0]!, /class="badge warn">voided</);

    // Without a reason: said so; voiding again changes nothing.
    await client.post("/usage/keep-me/void", {});
    const noReason = await client.get("/usage/keep-me");
    assert.match(noReason.body, /<\/time> — <span class="hint">no reason given<\/span><\/dd>/);
    assert.equal((await client.post("/usage/keep-me/void", { reason: "again" })).statusCode, 303);
    assert.equal((await getEvent(t(), key, "keep-me")).void_reason, undefined);
  });

  it("refuses a reason over 500 characters beside the field, keeping what was typed, and voids nothing", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Long Reason Co");
    await submitAccepted(t(), key, [usageEvent(contract.id, { event_id: "long-reason" })]);
    const refused = await client.post("/usage/long-reason/void", { reason: "x".repeat(501) });
    assert.equal(refused.statusCode, 400);
    assert.match(refused.body, /role="alert">One field needs your attention/);
    assert.equal(fieldErrorOf(refused.body, "void-reason"), "Too long: at most 500 characters.");
    assert.ok(refused.body.includes(`value="${"x".repeat(501)}"`), "the typed reason comes back");
    assert.match(refused.body, /<details class="card" open>\s*<summary><strong>Void this event/);
    assert.equal((await getEvent(t(), key, "long-reason")).status, "rated");
  });

  it("refuses to void an event whose invoice was issued with a 409 page and its alert, and offers no form", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Issued Void Co");
    await submitAccepted(t(), key, [usageEvent(contract.id, { event_id: "billed-event" })]);
    const [invoice] = await invoicesOf(t(), key, contract.id);
    assert.equal((await client.post(`/invoices/${invoice!.number}/finalize`, { confirm: "yes" })).statusCode, 303);
    const page = await client.get("/usage/billed-event");
    assert.equal(page.statusCode, 200);
    assert.doesNotMatch(page.body, /Void this event/);
    assert.match(page.body, /Its invoice is issued, no longer a draft: the event can no longer be voided/);
    // A page opened before the invoice was issued still posts the form.
    const refused = await client.post("/usage/billed-event/void", { reason: "too late" });
    assertAlert(refused, 409, /has been issued: its period is closed/);
    assert.match(refused.body, /<h1>Usage event billed-event<\/h1>/);
    assert.match(refused.body, /<dt>Status<\/dt><dd><span class="badge ok">rated<\/span>/);
    assert.equal((await getEvent(t(), key, "billed-event")).status, "rated");
    assertAlert(await client.post("/usage/no-such-event/void", {}), 404, /does not exist/);
  });

  it("sends a signed-out browser to the login page", async () => {
    const { client } = await dashboardCompany(t);
    client.cookies.clear();
    const page = await client.get("/usage?contract=x");
    assert.equal(page.statusCode, 303);
    assert.equal(page.headers.location, `/login?next=${encodeURIComponent("/usage?contract=x")}`);
  });
});
