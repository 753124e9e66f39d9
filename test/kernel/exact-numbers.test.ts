/**
 * Exact to the last digit at the JSON boundary (docs/api.md, "Numbers"): every money amount and quantity is
 * stored exactly as sent, as a JSON number or a string, or refused with a reason; and every answer carries
 * the stored decimal's own digits (API, invoice lines, MCP), never a double's.
 * The bodies here are written as text: a JavaScript object would round the numbers before they were sent.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import Big from "big.js";
import fc from "fast-check";
import { DECIMAL_CASES } from "../fixtures/decimal-cases.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import {
  CONTRACTS,
  INVOICES,
  USAGE,
  companyWithContract,
  createCustomer,
  createSampleContract,
  project,
  invoiceFor,
  newEventId,
  type SubmitResult,
} from "../support/api.js";
import { expectError, expectStatus } from "../support/assertions.js";
import { newUser, obtainTokens, send } from "../support/mcp-client.js";
import { fcParams, fromUnits, mulCharge, toUnits } from "../support/rating-reference.js";

const MARCH = "2026-03-20T10:00:00.000Z";

/** A JSON value in a body: the decimal as a bare number, or as a string. */
const jsonValue = (text: string, form: "number" | "string") => (form === "number" ? text : JSON.stringify(text));

/** Every number text that follows `"field":` in a JSON body (the answer is compact JSON). */
/**
 * The texts of `field`'s numbers in an answer, a draft's `projected` block left out (it restates the month's
 * figures, with the same digits).
 */
function numberTexts(body: string, field: string): string[] {
  return [...withoutProjected(body).matchAll(new RegExp(`"${field}":(-?[0-9][0-9.eE+-]*)`, "g"))].map((m) => m[1]!);
}

/** The answer's text without its `"projected":{…}` objects (matched by their braces, strings skipped). */
function withoutProjected(body: string): string {
  let out = body;
  for (let at = out.indexOf('"projected":{'); at >= 0; at = out.indexOf('"projected":{')) {
    let depth = 0;
    let inString = false;
    let end = at + '"projected":'.length;
    for (; end < out.length; end++) {
      const c = out[end];
      if (inString) {
        if (c === "\\") end++;
        else if (c === '"') inString = false;
      } else if (c === '"') inString = true;
      else if (c === "{") depth++;
      else if (c === "}" && --depth === 0) break;
    }
    out = `${out.slice(0, at)}"projected":null${out.slice(end + 1)}`;
  }
  return out;
}

function numberText(body: string, field: string): string {
  const found = numberTexts(body, field);
  assert.equal(found.length, 1, `one ${field} in ${body}`);
  return found[0]!;
}

/** An event as JSON text: `fields` are written as given (already JSON). */
function eventJson(contractId: string, eventId: string, fields: Record<string, string>): string {
  const parts = [
    `"external_contract_id":${JSON.stringify(contractId)}`,
    `"event_id":${JSON.stringify(eventId)}`,
    `"metric":"domestic_wire"`,
    `"timestamp":"${MARCH}"`,
  ];
  for (const [name, json] of Object.entries(fields)) parts.push(`${JSON.stringify(name)}:${json}`);
  return `{${parts.join(",")}}`;
}

async function submitText(t: TestApp, key: string, events: string[]): Promise<SubmitResult> {
  const res = await t.call({
    method: "POST",
    url: USAGE,
    key,
    headers: { "content-type": "application/json" },
    payload: `{"events":[${events.join(",")}]}`,
  });
  expectStatus(res, 200);
  return res.json() as SubmitResult;
}

// The sample contract prices domestic_wire at 20.00 per unit.
const FIELDS = [
  { field: "quantity", event: (json: string) => ({ quantity: json }), rated: (v: string) => new Big(v).times(20) },
  {
    field: "fee_amount",
    event: (json: string) => ({ quantity: "1", fee_amount: json }),
    rated: (v: string) => new Big(v),
  },
  {
    field: "applied_rate",
    event: (json: string) => ({ quantity: "1", applied_rate: json }),
    rated: (v: string) => new Big(v),
  },
] as const;

describeEachEngine("exact numbers at the JSON boundary", (t) => {
  for (const { field, event, rated } of FIELDS) {
    for (const form of ["number", "string"] as const) {
      it(`${field} sent as a ${form}: stored and read back digit for digit, or refused naming the field and the limit`, async () => {
        const { key, contract } = await companyWithContract(t());
        const ids = DECIMAL_CASES.map(() => newEventId(field));
        const result = await submitText(
          t(),
          key,
          DECIMAL_CASES.map((c, i) => eventJson(contract.id, ids[i]!, event(jsonValue(c.text, form)))),
        );
        for (const [i, c] of DECIMAL_CASES.entries()) {
          const answer = result.events[i]!;
          if (c.refused) {
            assert.equal(answer.status, "rejected", `${c.text}: ${JSON.stringify(answer)}`);
            assert.equal(answer.error?.code, "invalid_event");
            assert.match(answer.error!.message, new RegExp(`^${field}`), c.text);
            assert.match(answer.error!.message, c.refused, c.text);
            continue;
          }
          assert.equal(answer.status, "accepted", `${c.text}: ${JSON.stringify(answer)}`);
          const res = await t().call({ method: "GET", url: `${USAGE}/${ids[i]}`, key });
          expectStatus(res, 200);
          assert.equal(numberText(res.body, field), c.stored, `${c.text} read back`);
          assert.equal(
            numberText(res.body, "rated_amount"),
            rated(c.stored!).round(12, Big.roundHalfEven).toFixed(),
            `${c.text}: charge`,
          );
        }
      });
    }
  }

  it("refuses a money amount that a double would round (13 decimals) instead of storing the rounded value", async () => {
    const { key, contract } = await companyWithContract(t());
    const id = newEventId();
    const result = await submitText(t(), key, [
      eventJson(contract.id, id, { quantity: "0.100000000000000000000000000001" }),
    ]);
    assert.equal(result.events[0]!.status, "rejected");
    expectError(await t().call({ method: "GET", url: `${USAGE}/${id}`, key }), 404, "not_found");
  });

  it("invoice lines and totals carry the stored decimals: a fee of 99999999999999.99 is not …98", async () => {
    const { key, contract } = await companyWithContract(t());
    await submitText(t(), key, [
      eventJson(contract.id, newEventId(), { quantity: "1", fee_amount: "99999999999999.99" }),
      eventJson(contract.id, newEventId(), { quantity: "3", fee_amount: "0.01" }),
    ]);
    const invoice = await invoiceFor(t(), key, contract.id);
    const res = await t().call({ method: "GET", url: `${INVOICES}/${invoice.number}`, key });
    expectStatus(res, 200);
    assert.deepEqual(numberTexts(res.body, "amount"), ["100000000000000.00"], "one fee line: the two fees' exact sum");
    assert.deepEqual(numberTexts(res.body, "quantity"), ["4"]);
    assert.equal(numberText(res.body, "subtotal"), "100000000000000.00");
    assert.equal(numberText(res.body, "total"), "100000000000000.00");
    // The list answers the same digits.
    const list = await t().call({ method: "GET", url: `${INVOICES}?contract=${contract.id}`, key });
    assert.deepEqual(numberTexts(list.body, "total"), ["100000000000000.00"]);
  });

  it("writes every invoice amount with the currency's minor unit, whichever path stored it", async () => {
    const { key, contract } = await companyWithContract(t());
    await submitText(t(), key, [eventJson(contract.id, newEventId(), { quantity: "1" })]); // 20.00 by the batch path
    await project(t(), key, contract.id); // the 1,000.00 minimum's true-up, written by projection
    const invoice = await invoiceFor(t(), key, contract.id);
    const res = await t().call({ method: "GET", url: `${INVOICES}/${invoice.number}`, key });
    assert.deepEqual(numberTexts(res.body, "amount").sort(), ["20.00", "980.00"]);
    assert.equal(numberText(res.body, "total"), "1000.00");
    assert.equal(numberText(res.body, "tax"), "0.00");
  });

  it("pricing rules keep every digit of an amount, a rate and a cap sent as numbers", async () => {
    const { key, contract } = await companyWithContract(t());
    const add = (json: string) =>
      t().call({
        method: "POST",
        url: `${CONTRACTS}/${contract.id}/pricing-rules`,
        key,
        headers: { "content-type": "application/json" },
        payload: json,
      });
    let res = await add(
      '{"type":"usage","metric":"pct","rate":12345.123456789012,"allow_rate_above_one":true,"monthly_cap":99999999999999.99}',
    );
    expectStatus(res, 201);
    assert.equal(numberText(res.body, "rate"), "12345.123456789012");
    assert.match(res.body, /"monthly_cap":"99999999999999.99"/);
    res = await add('{"type":"usage","metric":"flat","amount":9999.999999999999}');
    expectStatus(res, 201);
    assert.match(res.body, /"amount":"9999.999999999999"/);
    const pricing = await t().call({ method: "GET", url: `${CONTRACTS}/${contract.id}/pricing`, key });
    assert.ok(numberTexts(pricing.body, "rate").includes("12345.123456789012"), pricing.body);

    for (const [json, path, why] of [
      ['{"type":"usage","metric":"x","rate":0.0000000000001}', "rate", /12 decimal places/],
      ['{"type":"usage","metric":"x","rate":0.100000000000000000000000000001}', "rate", /12 decimal places/],
      ['{"type":"usage","metric":"x","amount":1e400}', "amount", /10\^15/],
      ['{"type":"usage","metric":"x","amount":"1e308"}', "amount", /10\^15/],
      ['{"type":"usage","metric":"x","rate":0.1,"monthly_cap":1.001}', "monthly_cap", /2 decimal places/],
    ] as const) {
      const body = expectError(await add(json), 400, "invalid_pricing_rule");
      assert.ok(
        body.details?.some((d) => d.path === path && why.test(d.message)),
        `${json}: ${JSON.stringify(body)}`,
      );
    }
  });

  it("MCP tools take and answer the same exact digits as the API", async () => {
    const user = await newUser(t());
    const contract = await createSampleContract(
      t(),
      user.key,
      (await createCustomer(t(), user.key, { name: "MCP customer" })).id,
    );
    const { access_token: token } = await obtainTokens(t(), user);
    const rpc = (text: string) =>
      send(t(), {
        method: "POST",
        url: "/mcp",
        headers: {
          authorization: `Bearer ${token}`,
          "content-type": "application/json",
          accept: "application/json, text/event-stream",
        },
        payload: text,
      });
    const id = newEventId("mcp");
    const submitted = await rpc(
      `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"submit_usage","arguments":{"events":[${eventJson(contract.id, id, { quantity: "12345.123456789012", fee_amount: "99999999999999.99" })}]}}}`,
    );
    assert.equal(submitted.statusCode, 200, submitted.body);
    assert.match(submitted.body, /\\"status\\":\\"accepted\\"/);
    const got = await rpc(
      `{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"get_usage_event","arguments":{"event_id":${JSON.stringify(id)}}}}`,
    );
    assert.equal(got.statusCode, 200, got.body);
    // structuredContent: bare numbers in the JSON-RPC answer; content[0].text: the same JSON inside a string.
    assert.deepEqual(numberTexts(got.body, "quantity"), ["12345.123456789012"]);
    assert.deepEqual(numberTexts(got.body, "fee_amount"), ["99999999999999.99"]);
    const text = (JSON.parse(got.body) as { result: { content: { text: string }[] } }).result.content[0]!.text;
    assert.equal(numberText(text, "quantity"), "12345.123456789012");
    assert.equal(numberText(text, "rated_amount"), "99999999999999.99");

    const refused = await rpc(
      `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"add_pricing_rule","arguments":{"contract_id":${JSON.stringify(contract.id)},"rule":{"type":"usage","metric":"m","rate":0.100000000000000000000000000001}}}}`,
    );
    assert.equal(refused.statusCode, 200, refused.body);
    const result = (
      JSON.parse(refused.body) as { result: { isError?: boolean; structuredContent: { code: string; error: string } } }
    ).result;
    assert.equal(result.isError, true);
    assert.equal(result.structuredContent.code, "invalid_pricing_rule", "the code the API answers");
    assert.match(result.structuredContent.error, /12 decimal places/);
  });

  it("10,000 random events: each rated_amount and quantity reads back as the exact reference's digits", {
    timeout: 10 * 60_000,
  }, async () => {
    const { key, contract } = await companyWithContract(t());
    const params = fcParams(10_000);
    const decimal = (maxWhole: number, maxDecimals: number) =>
      fc
        .tuple(fc.bigInt({ min: 0n, max: 10n ** BigInt(maxWhole) - 1n }), fc.integer({ min: 0, max: maxDecimals }))
        .chain(([whole, decimals]) =>
          fc
            .bigInt({ min: 0n, max: 10n ** BigInt(decimals) - 1n })
            .map((fraction) =>
              decimals === 0 ? whole.toString() : `${whole}.${fraction.toString().padStart(decimals, "0")}`,
            ),
        );
    const events = fc
      .sample(
        fc.record({
          quantity: decimal(9, 12),
          rate: fc.option(decimal(4, 12), { nil: undefined }),
          asString: fc.boolean(),
          rateAsString: fc.boolean(),
        }),
        { numRuns: params.numRuns, ...(params.seed !== undefined ? { seed: params.seed } : {}) },
      )
      .map((e, i) => ({ ...e, id: `prop-${i}-${newEventId()}` }));

    for (let start = 0; start < events.length; start += 100) {
      const batch = events.slice(start, start + 100);
      const result = await submitText(
        t(),
        key,
        batch.map((e) =>
          eventJson(contract.id, e.id, {
            quantity: jsonValue(e.quantity, e.asString ? "string" : "number"),
            ...(e.rate !== undefined ? { applied_rate: jsonValue(e.rate, e.rateAsString ? "string" : "number") } : {}),
          }),
        ),
      );
      assert.equal(
        result.rejected,
        0,
        JSON.stringify(result.events.filter((e) => e.status === "rejected").slice(0, 3)),
      );
    }

    const readBack = new Map<string, { quantity: string; rated: string }>();
    let after: string | undefined;
    for (;;) {
      const res = await t().call({
        method: "GET",
        url: `${USAGE}?contract=${contract.id}&limit=100${after ? `&starting_after=${after}` : ""}`,
        key,
      });
      expectStatus(res, 200);
      // One event object per match: id, then its numbers, in the order the API writes them.
      for (const m of res.body.matchAll(/"id":"([^"]+)".*?"quantity":([0-9.]+).*?"rated_amount":([0-9.]+)/g))
        readBack.set(m[1]!, { quantity: m[2]!, rated: m[3]! });
      const page = res.json() as { data: { id: string }[]; has_more: boolean };
      if (!page.has_more) break;
      after = page.data.at(-1)!.id;
    }
    assert.equal(readBack.size, events.length);
    let mismatches = 0;
    for (const e of events) {
      const expectedRated = fromUnits(mulCharge(toUnits(e.quantity), toUnits(e.rate ?? "20")));
      const got = readBack.get(e.id)!;
      if (got.rated !== expectedRated || got.quantity !== fromUnits(toUnits(e.quantity))) {
        mismatches += 1;
        if (mismatches <= 5)
          console.error(`${e.id}: sent ${e.quantity} × ${e.rate ?? "20"}, expected ${expectedRated}, got`, got);
      }
    }
    assert.equal(mismatches, 0);
  });
});
