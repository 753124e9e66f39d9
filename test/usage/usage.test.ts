import assert from "node:assert/strict";
import { afterEach, it } from "node:test";
import { describeEachEngine } from "../support/harness.js";
import {
  APRIL,
  MARCH,
  USAGE,
  addRule,
  anotherContract,
  assertInvoicesMatchEvents,
  companyWithContract,
  eventsOf,
  getEvent,
  getPricing,
  invoiceFor,
  invoicesOf,
  keyWithScopes,
  lineNamed,
  newEventId,
  rejectionOf,
  setContractStatus,
  submit,
  submitAccepted,
  sum,
  usageEvent,
} from "../support/api.js";
import { assertDecimal, expectError, expectStatus } from "../support/assertions.js";

describeEachEngine("usage ingestion", (t) => {
  afterEach(() => t().clock.set(new Date("2026-03-15T12:00:00.000Z")));

  it("accepts an event, stores it rated at once, and says so per event", async () => {
    const { key, contract } = await companyWithContract(t());
    const domestic = (await getPricing(t(), key, contract.id)).rules.find((r) => r.metric === "domestic_wire")!;
    const event = usageEvent(contract.id, { quantity: 2, timestamp: "2026-03-20T10:00:00Z" });
    const result = await submit(t(), key, [event]);
    assert.deepEqual(result, {
      accepted: 1,
      rejected: 0,
      events: [{ event_id: event.event_id, status: "accepted", duplicate: false }],
    });

    const stored = await getEvent(t(), key, event.event_id as string);
    assert.equal(stored.object, "usage_event");
    assert.equal(stored.id, event.event_id);
    assert.equal(stored.contract, contract.id);
    assert.equal(stored.metric, "domestic_wire");
    assert.equal(stored.quantity, 2);
    assert.equal(stored.applied_rate, 20);
    assert.equal(stored.rated_amount, 40);
    assert.equal(stored.rule_id, domestic.id);
    assert.equal(stored.pricing_version, 1);
    assert.match(stored.invoice_number, /^INV-\d{6}$/);
    assert.equal(stored.service_period_start, "2026-03-01");
    assert.equal(stored.service_period_end, "2026-03-31");
    assert.equal(stored.timestamp, "2026-03-20T10:00:00.000Z");
    assert.equal(stored.ingested_at, "2026-03-15T12:00:00.000Z");
    assert.equal(stored.status, "rated");
    assert.equal("fee_amount" in stored, false);
    assert.equal("counterparty" in stored, false);
  });

  it("takes 1 and 100 events per request and refuses 0 or 101 with 400 invalid_request", async () => {
    const { key, contract } = await companyWithContract(t());
    const hundred = Array.from({ length: 100 }, () => usageEvent(contract.id));
    assert.equal((await submitAccepted(t(), key, hundred)).accepted, 100);
    for (const events of [[], Array.from({ length: 101 }, () => usageEvent(contract.id))]) {
      expectError(await t().call({ method: "POST", url: USAGE, key, payload: { events } }), 400, "invalid_request");
    }
    for (const payload of [
      {},
      { events: "many" },
      { events: usageEvent(contract.id) },
      { events: [usageEvent(contract.id)], extra: true },
    ]) {
      expectError(await t().call({ method: "POST", url: USAGE, key, payload }), 400, "invalid_request");
    }
    assert.equal((await eventsOf(t(), key, contract.id)).length, 100, "a refused request stores nothing");
  });

  it("answers 415 to a body that is not JSON and 400 invalid_json to JSON that does not parse", async () => {
    const { key, contract } = await companyWithContract(t());
    const text = JSON.stringify({ events: [usageEvent(contract.id)] });
    expectError(
      await t().call({ method: "POST", url: USAGE, key, payload: text, headers: { "content-type": "text/plain" } }),
      415,
      "unsupported_media_type",
    );
    expectError(
      await t().call({
        method: "POST",
        url: USAGE,
        key,
        payload: `${text.slice(0, -2)}`,
        headers: { "content-type": "application/json" },
      }),
      400,
      "invalid_json",
    );
    assert.equal((await eventsOf(t(), key, contract.id)).length, 0);
  });

  it("rejects an event for an unknown contract with contract_not_found", async () => {
    const { key } = await companyWithContract(t());
    await rejectionOf(t(), key, usageEvent("no-such-contract"), "contract_not_found");
  });

  it("rejects an event for a contract that is not active with contract_not_active", async () => {
    const { key, companyId, contract } = await companyWithContract(t());
    for (const status of ["cancelled", "draft", "completed", "terminated"]) {
      await setContractStatus(t(), companyId, contract.id, status);
      await rejectionOf(t(), key, usageEvent(contract.id), "contract_not_active");
    }
    await setContractStatus(t(), companyId, contract.id, "active");
    await submitAccepted(t(), key, [usageEvent(contract.id)]);
  });

  it("rejects an event timestamped outside the contract term with outside_contract_term", async () => {
    const { key, contract } = await companyWithContract(t());
    assert.equal(contract.start_date, "2026-03-15");
    await rejectionOf(
      t(),
      key,
      usageEvent(contract.id, { timestamp: "2026-03-14T23:59:59.999Z" }),
      "outside_contract_term",
    );
    await rejectionOf(
      t(),
      key,
      usageEvent(contract.id, { timestamp: "2025-12-31T10:00:00Z" }),
      "outside_contract_term",
    );
    assert.ok(contract.end_date, "the sample has an end date");
    const dayAfterEnd = new Date(Date.parse(`${contract.end_date}T00:00:00Z`) + 86_400_000).toISOString();
    // The clock in the month after the term: a day past the end is judged against the term, not refused as
    // timestamp_in_future, and the term's last moment can be sent.
    t().clock.set(new Date(dayAfterEnd));
    await rejectionOf(t(), key, usageEvent(contract.id, { timestamp: dayAfterEnd }), "outside_contract_term");
    // The first and last moments of the term are inside it.
    await submitAccepted(t(), key, [
      usageEvent(contract.id, { timestamp: "2026-03-15T00:00:00.000Z" }),
      usageEvent(contract.id, { timestamp: `${contract.end_date}T23:59:59.999Z` }),
    ]);
  });

  it("judges the term by the UTC day of the timestamp, whatever its offset", async () => {
    const { key, contract } = await companyWithContract(t());
    // 2026-03-15T01:00+02:00 is 2026-03-14T23:00Z: before the start date.
    await rejectionOf(
      t(),
      key,
      usageEvent(contract.id, { timestamp: "2026-03-15T01:00:00+02:00" }),
      "outside_contract_term",
    );
    // 2026-03-14T22:00-03:00 is 2026-03-15T01:00Z: inside.
    await submitAccepted(t(), key, [usageEvent(contract.id, { timestamp: "2026-03-14T22:00:00-03:00" })]);
  });

  it("rejects a metric the contract has no rule for with unknown_metric", async () => {
    const { key, contract } = await companyWithContract(t());
    const rejection = await rejectionOf(t(), key, usageEvent(contract.id, { metric: "card_swipe" }), "unknown_metric");
    assert.match(rejection.message, /card_swipe/);
    await rejectionOf(t(), key, usageEvent(contract.id, { metric: "Domestic_Wire" }), "unknown_metric");
  });

  const invalidEvents: [string, (contractId: string) => unknown][] = [
    ["without external_contract_id", (c) => omit(usageEvent(c), "external_contract_id")],
    ["without event_id", (c) => omit(usageEvent(c), "event_id")],
    ["without metric", (c) => omit(usageEvent(c), "metric")],
    ["without quantity", (c) => omit(usageEvent(c), "quantity")],
    ["without timestamp", (c) => omit(usageEvent(c), "timestamp")],
    ["with a numeric event_id", (c) => usageEvent(c, { event_id: 12345 })],
    ["with an empty event_id", (c) => usageEvent(c, { event_id: "" })],
    ["with a numeric contract id", (c) => usageEvent(c, { external_contract_id: 7 })],
    ["with a boolean quantity", (c) => usageEvent(c, { quantity: true })],
    ["with a null quantity", (c) => usageEvent(c, { quantity: null })],
    ["with a quantity in words", (c) => usageEvent(c, { quantity: "two" })],
    ["with a negative quantity", (c) => usageEvent(c, { quantity: -1 })],
    ["with a negative quantity string", (c) => usageEvent(c, { quantity: "-0.5" })],
    ["with a non-finite quantity string 1e309", (c) => usageEvent(c, { quantity: "1e309" })],
    ["with a quantity string Infinity", (c) => usageEvent(c, { quantity: "Infinity" })],
    ["with a quantity string NaN", (c) => usageEvent(c, { quantity: "NaN" })],
    ["with a huge quantity 1e15", (c) => usageEvent(c, { quantity: 1e15 })],
    ["with a huge quantity string", (c) => usageEvent(c, { quantity: "1000000000000000" })],
    ["with a quantity of more than 12 decimals", (c) => usageEvent(c, { quantity: "0.0000000000001" })],
    ["with a negative fee_amount", (c) => usageEvent(c, { fee_amount: -3 })],
    ["with a fee_amount in words", (c) => usageEvent(c, { fee_amount: "ten" })],
    ["with a negative applied_rate", (c) => usageEvent(c, { applied_rate: -1 })],
    ["with a timestamp that is not a date", (c) => usageEvent(c, { timestamp: "yesterday" })],
    ["with a date-only timestamp", (c) => usageEvent(c, { timestamp: "2026-03-20" })],
    ["with a timestamp without a time zone", (c) => usageEvent(c, { timestamp: "2026-03-20T10:00:00" })],
    ["with an impossible timestamp", (c) => usageEvent(c, { timestamp: "2026-02-30T10:00:00Z" })],
    ["with a numeric timestamp", (c) => usageEvent(c, { timestamp: 1773900000000 })],
    ["with an unknown field", (c) => usageEvent(c, { customer: "acme" })],
    ["with a misspelt field", (c) => ({ ...omit(usageEvent(c), "quantity"), qty: 1 })],
    ["that is null", () => null],
    ["that is a number", () => 42],
    ["that is an array", (c) => [usageEvent(c)]],
  ];

  for (const [what, make] of invalidEvents) {
    it(`rejects an event ${what} with invalid_event and stores nothing`, async () => {
      const { key, contract } = await companyWithContract(t());
      const event = make(contract.id);
      await rejectionOf(t(), key, event, "invalid_event");
      assert.deepEqual(await eventsOf(t(), key, contract.id), []);
    });
  }

  it("names the event_id of a rejected event when it has one, and null when it has none", async () => {
    const { key, contract } = await companyWithContract(t());
    const withId = usageEvent(contract.id, { quantity: -1 });
    const result = await submit(t(), key, [withId, omit(usageEvent(contract.id), "event_id")]);
    assert.equal(result.events[0]!.event_id, withId.event_id);
    assert.equal(result.events[1]!.event_id, null);
    assert.equal(result.events[1]!.error?.code, "invalid_event");
  });

  it("judges each event of a batch on its own: good events beside an unknown contract still land", async () => {
    const { key, contract } = await companyWithContract(t());
    const good1 = usageEvent(contract.id, { quantity: 1 });
    const lost = usageEvent("no-such-contract");
    const bad = usageEvent(contract.id, { quantity: "1e309" });
    const good2 = usageEvent(contract.id, { metric: "international_wire", quantity: 2 });
    const result = await submit(t(), key, [good1, lost, bad, good2]);
    assert.equal(result.accepted, 2);
    assert.equal(result.rejected, 2);
    assert.deepEqual(
      result.events.map((e) => [e.event_id, e.status, e.error?.code]),
      [
        [good1.event_id, "accepted", undefined],
        [lost.event_id, "rejected", "contract_not_found"],
        [bad.event_id, "rejected", "invalid_event"],
        [good2.event_id, "accepted", undefined],
      ],
    );
    assert.equal((await getEvent(t(), key, good1.event_id as string)).rated_amount, 20);
    assert.equal((await getEvent(t(), key, good2.event_id as string)).rated_amount, 60);
    expectError(await t().call({ method: "GET", url: `${USAGE}/${lost.event_id}`, key }), 404);
    expectError(await t().call({ method: "GET", url: `${USAGE}/${bad.event_id}`, key }), 404);
    const invoice = await invoiceFor(t(), key, contract.id);
    assert.equal(invoice.total, 80);
  });

  it("accepts a later copy of an event_id in the same batch as a duplicate and bills it once", async () => {
    const { key, contract } = await companyWithContract(t());
    const event = usageEvent(contract.id, { quantity: 3 });
    const result = await submit(t(), key, [event, { ...event }, { ...event, quantity: 50 }]);
    assert.equal(result.accepted, 3);
    assert.deepEqual(
      result.events.map((e) => [e.status, e.duplicate]),
      [
        ["accepted", false],
        ["accepted", true],
        ["accepted", true],
      ],
    );
    assert.equal((await eventsOf(t(), key, contract.id)).length, 1);
    assert.equal((await getEvent(t(), key, event.event_id as string)).quantity, 3);
    const line = lineNamed(await invoiceFor(t(), key, contract.id), "Domestic wire");
    assert.equal(line.quantity, 3);
    assert.equal(line.amount, 60);
  });

  it("answers a resubmitted event_id from an earlier request with accepted and duplicate: true, changing nothing", async () => {
    const { key, contract } = await companyWithContract(t());
    const event = usageEvent(contract.id, { quantity: 2 });
    await submitAccepted(t(), key, [event]);
    const first = await getEvent(t(), key, event.event_id as string);
    const invoiceBefore = await invoiceFor(t(), key, contract.id);
    const again = await submit(t(), key, [event]);
    assert.deepEqual(again, {
      accepted: 1,
      rejected: 0,
      events: [{ event_id: event.event_id, status: "accepted", duplicate: true }],
    });
    assert.deepEqual(await getEvent(t(), key, event.event_id as string), first);
    assert.deepEqual(await invoiceFor(t(), key, contract.id), invoiceBefore);
  });

  it("does not bill a resubmitted event_id twice even when its body differs, and keeps the first copy", async () => {
    const { key, contract } = await companyWithContract(t());
    const event = usageEvent(contract.id, { quantity: 2 });
    await submitAccepted(t(), key, [event]);
    const changed = { ...event, quantity: 99, metric: "international_wire", timestamp: APRIL };
    const again = await submit(t(), key, [changed]);
    assert.deepEqual(again.events, [{ event_id: event.event_id, status: "accepted", duplicate: true, differs: true }]);
    const stored = await getEvent(t(), key, event.event_id as string);
    assert.equal(stored.quantity, 2);
    assert.equal(stored.metric, "domestic_wire");
    assert.equal(stored.rated_amount, 40);
    const events = await eventsOf(t(), key, contract.id);
    assert.equal(events.length, 1);
    assert.equal((await invoiceFor(t(), key, contract.id)).total, 40);
  });

  it("bills only the new events of a batch that mixes them with stored ids, and opens no line for a stored copy priced elsewhere", async () => {
    // The ingest function gets the lines already summed; when its insert finds ids stored before, it must
    // sum again over the events it did insert (migrations/functions/billing_ingest_usage_lines.sql).
    const { key, contract } = await companyWithContract(t());
    const stored = usageEvent(contract.id, { quantity: 2 });
    await submitAccepted(t(), key, [stored]);
    const fresh = usageEvent(contract.id, { quantity: 3 });
    const again = await submit(t(), key, [{ ...stored, metric: "international_wire", quantity: 7 }, fresh]);
    assert.deepEqual(
      again.events.map((e) => [e.event_id, e.status, e.duplicate]),
      [
        [stored.event_id, "accepted", true],
        [fresh.event_id, "accepted", false],
      ],
    );
    const invoice = await invoiceFor(t(), key, contract.id);
    assert.deepEqual(
      invoice.line_items.filter((l) => l.kind === "usage").map((l) => [l.description, l.quantity, l.amount]),
      [["Domestic wire", 5, 100]],
    );
    assert.equal(invoice.total, 100);
    await assertInvoicesMatchEvents(t(), key, contract.id);
  });

  it("makes no draft invoice for a resubmitted event_id whose body names another month or another contract", async () => {
    const { key, contract } = await companyWithContract(t());
    const other = await anotherContract(t(), key);
    // April, so that the copy dated in April is judged a duplicate, not refused as timestamp_in_future.
    t().clock.set(new Date("2026-04-15T12:00:00.000Z"));
    const event = usageEvent(contract.id, { quantity: 2 });
    await submitAccepted(t(), key, [event]);
    const again = await submit(t(), key, [
      { ...event, timestamp: APRIL },
      { ...event, external_contract_id: other.id },
    ]);
    assert.deepEqual(
      again.events.map((e) => e.duplicate),
      [true, true],
    );
    const periods = (await invoicesOf(t(), key, contract.id)).map((i) => i.billing_period.start);
    assert.deepEqual(periods, ["2026-03-01"], "no April draft for the ignored copy");
    assert.deepEqual(await invoicesOf(t(), key, other.id), [], "no draft for the other contract either");
  });

  it("answers a duplicate even when it names another contract of the company", async () => {
    const { key, contract } = await companyWithContract(t());
    const other = await anotherContract(t(), key);
    const event = usageEvent(contract.id);
    await submitAccepted(t(), key, [event]);
    const again = await submit(t(), key, [{ ...event, external_contract_id: other.id }]);
    assert.equal(again.events[0]!.duplicate, true);
    assert.deepEqual(await eventsOf(t(), key, other.id), []);
  });

  it("lets a rejected event_id be sent again, corrected, and accepts it then", async () => {
    const { key, contract } = await companyWithContract(t());
    const event = usageEvent(contract.id, { metric: "wire" });
    await rejectionOf(t(), key, event, "unknown_metric");
    const fixed = await submit(t(), key, [{ ...event, metric: "domestic_wire" }]);
    assert.deepEqual(fixed.events, [{ event_id: event.event_id, status: "accepted", duplicate: false }]);
  });

  it("judges a corrected copy of a rejected event in the same batch on its own", async () => {
    const { key, contract } = await companyWithContract(t());
    const wrong = usageEvent(contract.id, { metric: "wire" });
    const result = await submit(t(), key, [wrong, { ...wrong, metric: "domestic_wire" }]);
    assert.equal(result.events[0]!.error?.code, "unknown_metric");
    assert.deepEqual(result.events[1], { event_id: wrong.event_id, status: "accepted", duplicate: false });
  });

  it("records the rule and program version on every stored event", async () => {
    const { key, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { metric: "card_volume", rate: 0.01 });
    await submitAccepted(t(), key, [
      usageEvent(contract.id),
      usageEvent(contract.id, { metric: "international_wire" }),
      usageEvent(contract.id, { metric: "card_volume", quantity: 100 }),
      usageEvent(contract.id, { fee_amount: 1.5 }),
    ]);
    const program = await getPricing(t(), key, contract.id);
    const ruleIds = new Set(program.rules.map((r) => r.id));
    const events = await eventsOf(t(), key, contract.id);
    assert.equal(events.length, 4);
    for (const e of events) {
      assert.ok(ruleIds.has(e.rule_id), `${e.id} names a rule of the program`);
      assert.equal(e.pricing_version, 2);
    }
  });

  it("lists usage events newest first, filtered by contract, metric, status and service period", async () => {
    const { key, contract } = await companyWithContract(t());
    const other = await anotherContract(t(), key);
    // April, so that April's event is not refused as timestamp_in_future.
    t().clock.set(new Date("2026-04-15T12:00:00.000Z"));
    const march1 = usageEvent(contract.id);
    const march2 = usageEvent(contract.id, { metric: "international_wire" });
    const april = usageEvent(contract.id, { timestamp: APRIL });
    const elsewhere = usageEvent(other.id);
    await submitAccepted(t(), key, [march1]);
    await submitAccepted(t(), key, [march2, april]);
    await submitAccepted(t(), key, [elsewhere]);
    const ids = async (query: string) => {
      const res = await t().call({ method: "GET", url: `${USAGE}?${query}`, key });
      expectStatus(res, 200);
      return res.json().data.map((e: { id: string }) => e.id);
    };
    assert.deepEqual(
      await ids(""),
      [elsewhere, april, march2, march1].map((e) => e.event_id),
    );
    assert.deepEqual(
      await ids(`contract=${contract.id}`),
      [april, march2, march1].map((e) => e.event_id),
    );
    assert.deepEqual(
      await ids(`contract=${contract.id}&metric=domestic_wire`),
      [april, march1].map((e) => e.event_id),
    );
    assert.deepEqual(
      await ids(`contract=${contract.id}&status=rated`),
      [april, march2, march1].map((e) => e.event_id),
    );
    assert.deepEqual(await ids(`contract=${contract.id}&status=accepted`), []);
    assert.deepEqual(await ids(`contract=${contract.id}&from=2026-04-01`), [april.event_id]);
    assert.deepEqual(
      await ids(`contract=${contract.id}&to=2026-03-31`),
      [march2, march1].map((e) => e.event_id),
    );
    assert.deepEqual(
      await ids(`contract=${contract.id}&from=2026-03-05&to=2026-03-20`),
      [march2, march1].map((e) => e.event_id),
    );
    assert.deepEqual(
      await ids(`contract=${contract.id}&from=2026-03-01&to=2026-04-30`),
      [april, march2, march1].map((e) => e.event_id),
    );
    assert.deepEqual(
      await ids(`contract=${contract.id}&from=2026-03-15&to=2026-04-02`),
      [april, march2, march1].map((e) => e.event_id),
    );
    assert.deepEqual(await ids(`contract=${contract.id}&from=2026-05-01&to=2026-05-31`), []);
    assert.deepEqual(await ids(`contract=${contract.id}&limit=1&starting_after=${april.event_id}`), [march2.event_id]);
    expectError(await t().call({ method: "GET", url: `${USAGE}?starting_after=nope`, key }), 400, "invalid_cursor");
  });

  it("refuses a service period filter whose from is after its to with 400, instead of an empty or a silently widened list", async () => {
    const { key, contract } = await companyWithContract(t());
    await submitAccepted(t(), key, [usageEvent(contract.id)]);
    // The second one, within March, used to answer March's events: the two dates were read as overlap bounds.
    for (const query of [
      "from=2026-05-01&to=2026-03-01",
      "from=2026-03-20&to=2026-03-10",
      `contract=${contract.id}&from=2026-03-02&to=2026-03-01`,
    ]) {
      const body = expectError(
        await t().call({ method: "GET", url: `${USAGE}?${query}`, key }),
        400,
        "invalid_request",
      );
      assert.equal(body.error, "Invalid request. querystring.from: must be on or before to", query);
      assert.deepEqual(body.details, [{ path: "querystring.from", message: "must be on or before to" }], query);
    }
    const sameDay = await t().call({ method: "GET", url: `${USAGE}?from=2026-03-10&to=2026-03-10`, key });
    expectStatus(sameDay, 200);
    assert.equal(sameDay.json().data.length, 1, "from equal to to is a day");
  });

  it("answers 404 Not found for an unknown event id", async () => {
    const { key } = await companyWithContract(t());
    const body = expectError(await t().call({ method: "GET", url: `${USAGE}/${newEventId()}`, key }), 404);
    assert.equal(body.error, "Not found");
  });
});

describeEachEngine("usage isolation and access", (t) => {
  it("rejects company B's events that name company A's contract with contract_not_found, and bills A nothing", async () => {
    const a = await companyWithContract(t());
    const b = await companyWithContract(t());
    await rejectionOf(t(), b.key, usageEvent(a.contract.id), "contract_not_found");
    assert.deepEqual(await eventsOf(t(), a.key, a.contract.id), []);
    const invoices = (await t().call({ method: "GET", url: "/v1/billing/invoices", key: a.key })).json().data;
    assert.deepEqual(invoices, []);
  });

  it("keeps event ids per company: B may use A's event_id, and neither sees the other's event", async () => {
    const a = await companyWithContract(t());
    const b = await companyWithContract(t());
    const eventId = newEventId("shared");
    await submitAccepted(t(), a.key, [usageEvent(a.contract.id, { event_id: eventId, quantity: 1 })]);
    const bResult = await submit(t(), b.key, [usageEvent(b.contract.id, { event_id: eventId, quantity: 5 })]);
    assert.deepEqual(bResult.events, [{ event_id: eventId, status: "accepted", duplicate: false }]);
    assert.equal((await getEvent(t(), a.key, eventId)).quantity, 1);
    assert.equal((await getEvent(t(), b.key, eventId)).quantity, 5);
    const c = await t().newCompany();
    expectError(await t().call({ method: "GET", url: `${USAGE}/${eventId}`, key: c.key }), 404);
    const list = (await t().call({ method: "GET", url: USAGE, key: c.key })).json();
    assert.deepEqual(list.data, []);
    expectError(
      await t().call({ method: "GET", url: `${USAGE}?starting_after=${eventId}`, key: c.key }),
      400,
      "invalid_cursor",
    );
  });

  it("answers 401 Missing API key on every usage endpoint without a key", async () => {
    const { contract } = await companyWithContract(t());
    for (const request of [
      { method: "POST" as const, url: USAGE, payload: { events: [usageEvent(contract.id)] } },
      { method: "GET" as const, url: USAGE },
      { method: "GET" as const, url: `${USAGE}/some-event` },
    ]) {
      assert.equal(expectError(await t().call(request), 401).error, "Missing API key");
    }
  });

  it("answers 403 to a key without usage:write on submit, and stores nothing", async () => {
    const { companyId, key, contract } = await companyWithContract(t());
    const reader = await keyWithScopes(t(), companyId, ["usage:read", "contracts:write", "invoices:read"]);
    const event = usageEvent(contract.id);
    expectError(await t().call({ method: "POST", url: USAGE, key: reader, payload: { events: [event] } }), 403);
    assert.deepEqual(await eventsOf(t(), key, contract.id), []);
    const writer = await keyWithScopes(t(), companyId, ["usage:write"]);
    await submitAccepted(t(), writer, [event]);
  });
});

describeEachEngine("rating usage events", (t) => {
  afterEach(() => t().clock.set(new Date("2026-03-15T12:00:00.000Z")));

  it("bills the spec's volume-plus-fee example: fee_amount is the charge and the fees line's unit price is amount / quantity", async () => {
    const { key, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { metric: "usd_transaction_volume_processed", rate: 0 });
    const a = usageEvent(contract.id, { metric: "usd_transaction_volume_processed", quantity: 10000, fee_amount: 30 });
    const b = usageEvent(contract.id, {
      metric: "usd_transaction_volume_processed",
      quantity: 5000,
      fee_amount: "15.00",
    });
    await submitAccepted(t(), key, [a, b]);
    const first = await getEvent(t(), key, a.event_id as string);
    assert.equal(first.rated_amount, 30);
    assert.equal(first.fee_amount, 30);
    assert.equal(first.quantity, 10000);
    assert.equal((await getEvent(t(), key, b.event_id as string)).rated_amount, 15);
    const invoice = await invoiceFor(t(), key, contract.id);
    const line = lineNamed(invoice, "usd_transaction_volume_processed fees");
    assert.equal(line.quantity, 15000);
    assert.equal(line.amount, 45);
    assertDecimal(line.unit_price, "0.003", "unit_price = amount / quantity");
    assert.equal(invoice.total, 45);
    await assertInvoicesMatchEvents(t(), key, contract.id);
  });

  it("sets a fees line's unit price to its rounded amount divided by its quantity", async () => {
    const { key, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { metric: "usd_transaction_volume_processed", rate: 0 });
    await submitAccepted(t(), key, [
      usageEvent(contract.id, { metric: "usd_transaction_volume_processed", quantity: 60, fee_amount: "0.111" }),
      usageEvent(contract.id, { metric: "usd_transaction_volume_processed", quantity: 40, fee_amount: "0.222" }),
    ]);
    const line = lineNamed(await invoiceFor(t(), key, contract.id), "usd_transaction_volume_processed fees");
    assert.equal(line.amount, 0.33); // 0.333 rounded
    assert.equal(line.quantity, 100);
    assertDecimal(line.unit_price, "0.0033");
    await assertInvoicesMatchEvents(t(), key, contract.id);
  });

  it("bills fee_amount as is on a priced metric, ignoring the contract rate", async () => {
    const { key, contract } = await companyWithContract(t());
    const event = usageEvent(contract.id, { quantity: 4, fee_amount: 12.34 });
    await submitAccepted(t(), key, [event]);
    const stored = await getEvent(t(), key, event.event_id as string);
    assert.equal(stored.rated_amount, 12.34);
    assert.equal(stored.fee_amount, 12.34);
    await rejectionOf(t(), key, usageEvent(contract.id, { metric: "not_a_metric", fee_amount: 1 }), "unknown_metric");
    const both = usageEvent(contract.id, { quantity: 4, fee_amount: 5, applied_rate: 100 });
    await submitAccepted(t(), key, [both]);
    assert.equal(
      (await getEvent(t(), key, both.event_id as string)).rated_amount,
      5,
      "fee_amount wins over applied_rate",
    );
    await assertInvoicesMatchEvents(t(), key, contract.id);
  });

  it("rejects events for a contract whose program has no usage rule for the metric until one is added", async () => {
    const { key, contract } = await companyWithContract(t());
    const event = usageEvent(contract.id, { metric: "usd_transaction_volume_processed", quantity: 100, fee_amount: 1 });
    await rejectionOf(t(), key, event, "unknown_metric");
    await addRule(t(), key, contract.id, { metric: "usd_transaction_volume_processed", rate: 0 });
    await submitAccepted(t(), key, [event]);
  });

  it("charges a flat usage rule quantity times its per-unit price", async () => {
    const { key, contract } = await companyWithContract(t());
    const events = [
      usageEvent(contract.id, { quantity: 3 }),
      usageEvent(contract.id, { quantity: 0.5 }),
      usageEvent(contract.id, { quantity: "1.25" }),
      usageEvent(contract.id, { metric: "international_wire", quantity: 2 }),
      usageEvent(contract.id, { quantity: 0 }),
    ];
    await submitAccepted(t(), key, events);
    const rated = await Promise.all(events.map((e) => getEvent(t(), key, e.event_id as string)));
    assert.deepEqual(
      rated.map((e) => e.rated_amount),
      [60, 10, 25, 60, 0],
    );
    const invoice = await invoiceFor(t(), key, contract.id);
    const domestic = lineNamed(invoice, "Domestic wire");
    assert.equal(domestic.quantity, 4.75);
    assert.equal(domestic.unit_price, 20);
    assert.equal(domestic.amount, 95);
    assert.equal(lineNamed(invoice, "International wire").amount, 60);
    assert.equal(invoice.total, 155);
  });

  it("charges a percentage rule quantity times rate, keeping full precision on the event", async () => {
    const { key, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { metric: "card_volume", model: "percentage", rate: 0.029 });
    const a = usageEvent(contract.id, { metric: "card_volume", quantity: 1234.56 });
    const b = usageEvent(contract.id, { metric: "card_volume", quantity: "0.01" });
    await submitAccepted(t(), key, [a, b]);
    assert.equal((await getEvent(t(), key, a.event_id as string)).rated_amount, 35.80224);
    assert.equal((await getEvent(t(), key, b.event_id as string)).rated_amount, 0.00029);
    const line = lineNamed(await invoiceFor(t(), key, contract.id), "card_volume usage");
    assert.equal(line.unit_price, 0.029);
    assert.equal(line.amount, 35.8); // 35.80253 rounded to cents
    await assertInvoicesMatchEvents(t(), key, contract.id);
  });

  it("uses an event's applied_rate instead of the rule's price and puts it on its own line", async () => {
    const { key, contract } = await companyWithContract(t());
    const override = usageEvent(contract.id, { quantity: 2, applied_rate: 15 });
    const normal = usageEvent(contract.id, { quantity: 1 });
    await submitAccepted(t(), key, [override, normal]);
    const stored = await getEvent(t(), key, override.event_id as string);
    assert.equal(stored.applied_rate, 15);
    assert.equal(stored.rated_amount, 30);
    const invoice = await invoiceFor(t(), key, contract.id);
    const lines = invoice.line_items.filter((l) => l.description === "Domestic wire");
    assert.deepEqual(
      lines.map((l) => [l.unit_price, l.quantity, l.amount]).sort((x, y) => x[0]! - y[0]!),
      [
        [15, 2, 30],
        [20, 1, 20],
      ],
    );
    assert.equal(invoice.total, 50);
    await assertInvoicesMatchEvents(t(), key, contract.id);
  });

  it("applies the most specific counterparty-scoped rule that matches, beside the unscoped one", async () => {
    const { key, contract } = await companyWithContract(t());
    const general = await addRule(t(), key, contract.id, { id: "fx-any", metric: "fx_trade", rate: 0.001 });
    const bank = await addRule(t(), key, contract.id, {
      id: "fx-bank",
      metric: "fx_trade",
      rate: 0.0005,
      counterparty: "acme-bank",
    });
    const maker = await addRule(t(), key, contract.id, {
      id: "fx-bank-maker",
      metric: "fx_trade",
      rate: 0.0002,
      counterparty: "acme-bank",
      counterparty_side: "maker",
    });
    const pair = await addRule(t(), key, contract.id, {
      id: "fx-bank-maker-eur",
      metric: "fx_trade",
      rate: 0.0001,
      counterparty: "acme-bank",
      counterparty_side: "maker",
      pair: "EUR/USD",
    });
    const cases: [Record<string, unknown>, string, number][] = [
      [{}, general.rule.id, 1],
      [{ counterparty: "other-bank" }, general.rule.id, 1],
      [{ counterparty: "acme-bank" }, bank.rule.id, 0.5],
      [{ counterparty: "acme-bank", counterparty_side: "taker" }, bank.rule.id, 0.5],
      [{ counterparty: "acme-bank", counterparty_side: "maker" }, maker.rule.id, 0.2],
      [{ counterparty: "acme-bank", counterparty_side: "maker", pair: "GBP/USD" }, maker.rule.id, 0.2],
      [{ counterparty: "acme-bank", counterparty_side: "maker", pair: "EUR/USD" }, pair.rule.id, 0.1],
      [{ counterparty_side: "maker", pair: "EUR/USD" }, general.rule.id, 1],
    ];
    for (const [scope, ruleId, charge] of cases) {
      const event = usageEvent(contract.id, { metric: "fx_trade", quantity: 1000, ...scope });
      await submitAccepted(t(), key, [event]);
      const stored = await getEvent(t(), key, event.event_id as string);
      assert.equal(stored.rule_id, ruleId, JSON.stringify(scope));
      assert.equal(stored.rated_amount, charge, JSON.stringify(scope));
      assert.equal(stored.counterparty, scope.counterparty, "the event keeps its counterparty");
    }
    const invoice = await invoiceFor(t(), key, contract.id);
    assert.equal(lineNamed(invoice, "fx_trade usage").amount, 3);
    assert.equal(lineNamed(invoice, "fx_trade usage (acme-bank)").amount, 1);
    await assertInvoicesMatchEvents(t(), key, contract.id);
  });

  it("rejects an event no rule of its metric matches when every rule of the metric is scoped", async () => {
    const { key, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { metric: "otc_trade", rate: 0.001, counterparty: "acme-bank" });
    await rejectionOf(
      t(),
      key,
      usageEvent(contract.id, { metric: "otc_trade", counterparty: "other-bank" }),
      "unknown_metric",
    );
    await submitAccepted(t(), key, [usageEvent(contract.id, { metric: "otc_trade", counterparty: "acme-bank" })]);
  });

  it("charges the event that crosses a monthly cap the remainder and later events 0", async () => {
    const { key, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { id: "api", metric: "api_call", amount: "0.50", monthly_cap: "10.00" });
    const events = [
      usageEvent(contract.id, { metric: "api_call", quantity: 15 }), // 7.50
      usageEvent(contract.id, { metric: "api_call", quantity: 10 }), // 5.00, only 2.50 left
      usageEvent(contract.id, { metric: "api_call", quantity: 3 }), // 0
      usageEvent(contract.id, { metric: "api_call", quantity: 2, applied_rate: 1 }), // rate-based too: 0
    ];
    for (const event of events) await submitAccepted(t(), key, [event]);
    const rated = await Promise.all(events.map((e) => getEvent(t(), key, e.event_id as string)));
    assert.deepEqual(
      rated.map((e) => e.rated_amount),
      [7.5, 2.5, 0, 0],
    );
    const invoice = await invoiceFor(t(), key, contract.id);
    assertDecimal(sum(invoice.line_items.filter((l) => l.rule_id === "api").map((l) => l.amount)), "10.00");
    await assertInvoicesMatchEvents(t(), key, contract.id);
  });

  it("starts a monthly cap afresh in the next service period and leaves fees uncapped", async () => {
    const { key, contract } = await companyWithContract(t());
    // April, so that April's event is not refused as timestamp_in_future.
    t().clock.set(new Date("2026-04-15T12:00:00.000Z"));
    await addRule(t(), key, contract.id, { metric: "api_call", amount: "1.00", monthly_cap: "5.00" });
    const march = usageEvent(contract.id, { metric: "api_call", quantity: 8 });
    const april = usageEvent(contract.id, { metric: "api_call", quantity: 8, timestamp: APRIL });
    const fee = usageEvent(contract.id, { metric: "api_call", quantity: 1, fee_amount: 100 });
    const afterFee = usageEvent(contract.id, { metric: "api_call", quantity: 1 });
    await submitAccepted(t(), key, [march, april, fee, afterFee]);
    assert.equal((await getEvent(t(), key, march.event_id as string)).rated_amount, 5);
    assert.equal((await getEvent(t(), key, april.event_id as string)).rated_amount, 5);
    assert.equal((await getEvent(t(), key, fee.event_id as string)).rated_amount, 100);
    assert.equal(
      (await getEvent(t(), key, afterFee.event_id as string)).rated_amount,
      0,
      "the fee did not reopen the cap",
    );
    await assertInvoicesMatchEvents(t(), key, contract.id);
  });

  it("rates events in batch order against a cap inside one request", async () => {
    const { key, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { metric: "api_call", amount: "3.00", monthly_cap: "10.00" });
    const events = Array.from({ length: 5 }, () => usageEvent(contract.id, { metric: "api_call", quantity: 1 }));
    await submitAccepted(t(), key, events);
    const rated = await Promise.all(events.map((e) => getEvent(t(), key, e.event_id as string)));
    assert.deepEqual(
      rated.map((e) => e.rated_amount),
      [3, 3, 3, 1, 0],
    );
  });

  it("keeps events of March and April on separate invoices of their month", async () => {
    const { key, contract } = await companyWithContract(t());
    // April, so that April's event is not refused as timestamp_in_future.
    t().clock.set(new Date("2026-04-15T12:00:00.000Z"));
    const march = usageEvent(contract.id, { timestamp: MARCH });
    const april = usageEvent(contract.id, { timestamp: APRIL });
    await submitAccepted(t(), key, [march, april]);
    const m = await getEvent(t(), key, march.event_id as string);
    const a = await getEvent(t(), key, april.event_id as string);
    assert.notEqual(m.invoice_number, a.invoice_number);
    assert.deepEqual([a.service_period_start, a.service_period_end], ["2026-04-01", "2026-04-30"]);
  });
});

function omit(event: Record<string, unknown>, field: string): Record<string, unknown> {
  const { [field]: _dropped, ...rest } = event;
  return rest;
}
