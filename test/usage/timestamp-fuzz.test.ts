/**
 * Every instant of the ISO 8601 grammar (and a little past it) on a real contract and metric, sent beside
 * valid batches, on the API, MCP and projection: never an answer of 500 or more, never a valid batch
 * failed by another's bad event, and every event that was stored sits in the service period of its timestamp.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import fc from "fast-check";
import { describeEachEngine } from "../support/harness.js";
import { companyWithContract, PROJECT, USAGE, usageEvent } from "../support/api.js";
import { anyCalendarMonth, iso8601Instant } from "../support/fuzz-generators.js";
import { mcpRequest } from "../support/mcp-client.js";
import { instantRefusal } from "../../src/domain/kernel/time-range.js";

/** The harness clock is in March 2026: an instant of a later month (inside the term or not) is timestamp_in_future. */
const REFUSALS = new Set(["invalid_event", "outside_contract_term", "timestamp_in_future"]);

describeEachEngine("instants from the whole ISO 8601 grammar", (t) => {
  it("are stored in the period of their timestamp or refused per event, never failing a valid batch sent beside them", async () => {
    const { key, companyId, contract } = await companyWithContract(t());
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.array(iso8601Instant, { minLength: 1, maxLength: 6 }), { minLength: 1, maxLength: 3 }),
        async (batches) => {
          const odd = batches.map((stamps) => stamps.map((timestamp) => usageEvent(contract.id, { timestamp })));
          const good = [usageEvent(contract.id), usageEvent(contract.id)];
          const responses = await Promise.all(
            [good, ...odd].map((events) => t().call({ method: "POST", url: USAGE, key, payload: { events } })),
          );
          for (const res of responses) assert.equal(res.statusCode, 200, res.body);
          assert.equal(responses[0]!.json().accepted, 2, "the valid batch is stored whatever came with it");
          responses.slice(1).forEach((res, b) => {
            res
              .json()
              .events.forEach((answer: { status: string; error?: { code: string; message: string } }, i: number) => {
                const timestamp = String(odd[b]![i]!.timestamp);
                if (answer.status === "accepted") {
                  assert.equal(instantRefusal(timestamp, true), undefined, `${timestamp} was accepted`);
                } else {
                  assert.ok(REFUSALS.has(answer.error!.code), `${timestamp}: ${JSON.stringify(answer.error)}`);
                  if (answer.error!.code === "invalid_event") assert.match(answer.error!.message, /^timestamp/);
                  if (answer.error!.code === "timestamp_in_future")
                    assert.match(answer.error!.message, /falls in a month after the current one \(2026-03, UTC\)/);
                }
              });
          });
        },
      ),
      { numRuns: 40 },
    );
    assert.deepEqual((await t().app.services.invariants.verify(companyId)).problems, []);
  });

  it("are answered per event through MCP too, never as an internal error", async () => {
    const { key, contract } = await companyWithContract(t());
    await fc.assert(
      fc.asyncProperty(fc.array(iso8601Instant, { minLength: 1, maxLength: 5 }), async (stamps) => {
        const events = stamps.map((timestamp) => usageEvent(contract.id, { timestamp }));
        const res = await mcpRequest(t(), key, "tools/call", { name: "submit_usage", arguments: { events } });
        assert.ok(res.statusCode < 500, res.body);
        const body = res.json();
        assert.equal(body.error, undefined, res.body);
        assert.notEqual(body.result.isError, true, res.body);
      }),
      { numRuns: 25 },
    );
  });

  it("name billing months a projection takes or refuses with a 4xx, from year 0001 to 9999", async () => {
    const { key, contract } = await companyWithContract(t());
    await fc.assert(
      fc.asyncProperty(anyCalendarMonth, async ([start, end]) => {
        const res = await t().call({
          method: "POST",
          url: PROJECT,
          key,
          payload: { external_contract_id: contract.id, billing_period_start: start, billing_period_end: end },
        });
        assert.ok(res.statusCode < 500, `${start}..${end}: ${res.body}`);
        // The dates are valid (0001-9999); a billing month is one from 1970-01 to 9989-12.
        if (start < "1970" || start >= "9990") {
          assert.equal(res.json().code, "invalid_billing_period", res.body);
          assert.match(res.json().error, /a month from 1970-01 to 9989-12/);
        }
      }),
      { numRuns: 40 },
    );
  });
});
