import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import {
  addRule,
  assertInvoicesMatchEvents,
  CONTRACTS,
  companyWithContract,
  invoiceFor,
  lineNamed,
  submitInParallel,
  usageEvent,
  type SubmitResult,
} from "../support/api.js";
import { expectStatus } from "../support/assertions.js";
import { multipart, plainPdf, uploadTerms } from "../support/uploads.js";

/** An open-ended contract (no end date) with one uncapped usage rule, uploaded as a customer would. */
async function openEndedContract(t: TestApp, key: string): Promise<string> {
  const terms = uploadTerms({
    end_date: null,
    rules: [{ name: "Domestic wire", type: "usage", model: "flat", metric: "domestic_wire", amount: "0.25" }],
  });
  const body = await multipart([
    { name: "file", value: await plainPdf(), filename: "signed.pdf", type: "application/pdf" },
    { name: "terms", value: JSON.stringify(terms) },
  ]);
  const res = await t.call({
    method: "POST",
    url: `${CONTRACTS}/upload`,
    key,
    payload: body.payload,
    headers: body.headers,
  });
  expectStatus(res, 201);
  return res.json().id as string;
}

async function storedEvents(t: TestApp, companyId: string): Promise<number> {
  const { rows } = await t.app.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM usage_events WHERE company_id = $1",
    [companyId],
  );
  return rows[0]!.n;
}

const batchOf = (contractId: string, size: number) => Array.from({ length: size }, () => usageEvent(contractId));

/** 99 good events with one bad one in the middle. */
function withOneBad(contractId: string, bad: Record<string, unknown>): Record<string, unknown>[] {
  const events: Record<string, unknown>[] = batchOf(contractId, 99);
  events.splice(50, 0, bad);
  return events;
}

function assertAllAccepted(result: SubmitResult, count: number) {
  assert.equal(
    result.accepted,
    count,
    JSON.stringify(result.events.filter((e) => e.status !== "accepted").slice(0, 3)),
  );
  assert.equal(result.rejected, 0);
}

/** The one rejected event of a batch, which must be at index 50. */
function onlyRejection(result: SubmitResult): { code: string; message: string } {
  assert.equal(result.accepted, 99);
  assert.equal(result.rejected, 1);
  const refused = result.events[50]!;
  assert.equal(refused.status, "rejected");
  return refused.error!;
}

describeEachEngine("one request's bad input never fails another's", (t) => {
  it("stores 30 valid batches sent together with 10 batches each holding one unstorable event, and refuses each bad event alone", async () => {
    const { key, companyId, contract } = await companyWithContract(t());
    const open = await openEndedContract(t(), key);
    const valid = Array.from({ length: 30 }, () => batchOf(contract.id, 100));
    const bad = Array.from({ length: 10 }, (_, i) =>
      i % 2 === 0
        ? withOneBad(contract.id, usageEvent(contract.id, { timestamp: "2026-03-20T10:00:00+20:00" }))
        : withOneBad(open, usageEvent(open, { timestamp: "9999-12-20T10:00:00Z" })),
    );
    // Interleaved, so that bad batches are written in the same groups as good ones.
    const batches = valid.flatMap((b, i) => (i % 3 === 0 && bad[i / 3] ? [b, bad[i / 3]!] : [b]));
    assert.equal(batches.length, 40);
    const results = await submitInParallel(t(), key, batches);
    results.forEach((result, i) => {
      const batch = batches[i]!;
      if (valid.includes(batch)) return assertAllAccepted(result, 100);
      const error = onlyRejection(result);
      assert.equal(error.code, "invalid_event");
      assert.match(error.message, /timestamp/);
      assert.match(
        error.message,
        batch[50]!.timestamp === "9999-12-20T10:00:00Z"
          ? /billing month from 1970-01 to 9989-12/
          : /offset must be at most ±15:59/,
      );
    });
    assert.equal(await storedEvents(t(), companyId), 30 * 100 + 10 * 99);
    await assertInvoicesMatchEvents(t(), key, contract.id);
  });

  it("answers an event the database itself refuses on its own, on the batch path, and stores every other event of every request", async () => {
    const { key, companyId, contract } = await companyWithContract(t());
    await refuseIdsStartingWith(t(), "poison-", async () => {
      const valid = Array.from({ length: 30 }, () => batchOf(contract.id, 100));
      const bad = Array.from({ length: 10 }, (_, i) =>
        withOneBad(contract.id, usageEvent(contract.id, { event_id: `poison-batch-${i}` })),
      );
      const results = await submitInParallel(t(), key, [...bad.slice(0, 5), ...valid, ...bad.slice(5)]);
      results.forEach((result, i) => {
        if (i < 5 || i >= 35) {
          const error = onlyRejection(result);
          assert.equal(error.code, "invalid_event");
          assert.match(error.message, /^The database cannot store this event: /);
        } else {
          assertAllAccepted(result, 100);
        }
      });
      assert.equal(await storedEvents(t(), companyId), 30 * 100 + 10 * 99);
      const { rows } = await t().app.db.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM usage_events WHERE company_id = $1 AND id LIKE 'poison-%'",
        [companyId],
      );
      assert.equal(rows[0]!.n, 0, "no refused event is stored");
    });
    await assertInvoicesMatchEvents(t(), key, contract.id);
  });

  it("answers an event the database refuses on its own on the locking path too, with the monthly cap charged in batch order", async () => {
    const { key, companyId, contract } = await companyWithContract(t());
    await addRule(t(), key, contract.id, { id: "api", metric: "api_call", amount: "1.00", monthly_cap: "150" });
    await refuseIdsStartingWith(t(), "poison-", async () => {
      const capped = (id?: string) => usageEvent(contract.id, { metric: "api_call", ...(id ? { event_id: id } : {}) });
      const first = [
        ...Array.from({ length: 60 }, () => capped()),
        capped("poison-capped"),
        ...Array.from({ length: 39 }, () => capped()),
      ];
      const second = Array.from({ length: 100 }, () => capped());
      const [a, b] = await submitInParallel(t(), key, [first, second]);
      assert.equal(a!.accepted, 99);
      assert.equal(a!.events[60]!.status, "rejected");
      assert.equal(a!.events[60]!.error!.code, "invalid_event");
      assertAllAccepted(b!, 100);
    });
    assert.equal(await storedEvents(t(), companyId), 199);
    const line = lineNamed(await invoiceFor(t(), key, contract.id), "api_call usage");
    assert.equal(line.quantity, 199);
    assert.equal(line.amount, 150, "the cap holds across the halves the refused batch was written in");
    await assertInvoicesMatchEvents(t(), key, contract.id);
  });
});

/**
 * Makes the database refuse, with a data exception (SQLSTATE 22023), every usage event whose id starts with
 * `prefix`, for the length of `run`: a stand-in for any value the database cannot hold that validation let by.
 */
async function refuseIdsStartingWith(t: TestApp, prefix: string, run: () => Promise<void>): Promise<void> {
  await t.app.db.query(
    `CREATE OR REPLACE FUNCTION test_refuse_ids() RETURNS trigger LANGUAGE plpgsql AS $$
     BEGIN
       IF NEW.id LIKE '${prefix}%' THEN RAISE EXCEPTION 'invalid parameter value: %', NEW.id USING ERRCODE = '22023'; END IF;
       RETURN NEW;
     END $$`,
  );
  await t.app.db.query(
    `CREATE TRIGGER test_refuse_ids BEFORE INSERT ON usage_events FOR EACH ROW EXECUTE FUNCTION test_refuse_ids()`,
  );
  try {
    await run();
  } finally {
    await t.app.db.query(`DROP TRIGGER test_refuse_ids ON usage_events`);
  }
}
