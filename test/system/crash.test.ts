/**
 * Crash safety (issue 8, item 2): the service is SIGKILLed at random moments while clients send usage
 * batches and create customers and contracts, and restarted on the same database, again and again. After
 * the last restart the stored data must agree with every answer the clients got:
 *
 * - every event answered `accepted` is stored exactly once, as it was sent;
 * - no event answered `rejected` is stored, nor one that only ever got a refusal (a non-200 answer);
 * - an event whose request failed (connection reset, no answer) is stored once or not at all;
 * - one answer at most calls an event new (`duplicate: false`), whatever the retries and repeats;
 * - every customer and contract answered 201 exists, and each of them has its event (transactional outbox);
 * - every event has its delivery to the endpoint, delivered or still pending (none lost, none stuck);
 * - `billing verify` (the real command line) exits 0 with `"ok": true`.
 *
 * PostgreSQL: one process, then two processes sharing the load with one of them killed repeatedly.
 * PGlite: one process on a data folder; a killed process leaves its pid file behind, which must not block
 * the restart. CRASH_ROUNDS=n kills n times on PostgreSQL (default 4) and n/2 times on PGlite (default 2).
 */
import assert from "node:assert/strict";
import { randomBytes, randomInt } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it, type TestContext } from "node:test";
import type { Database } from "../../src/db/database.js";
import { openDatabase } from "../../src/db/open-database.js";
import { createTestDatabase, postgresSkip, type TestDatabase } from "../support/harness.js";
import { waitFor } from "../support/assertions.js";
import {
  assertVerifyPasses,
  ensureCliBuilt,
  kill,
  runBilling,
  serviceProcesses,
  stop,
  type ServiceProcess,
} from "../support/service-process.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";

const crashRounds = Number(process.env.CRASH_ROUNDS);
const PG_ROUNDS = crashRounds > 0 ? crashRounds : 4;
const PGLITE_ROUNDS = crashRounds > 0 ? Math.max(1, Math.ceil(crashRounds / 2)) : 2;
const TEST_TIMEOUT_MS = crashRounds > 0 ? 60_000 + crashRounds * 20_000 : 100_000;

const skipPostgres = postgresSkip();

const apiKey = `sk_test_crash_${randomBytes(12).toString("hex")}`;

/** The service's settings in these tests: a short webhook timeout and lease, so that a killed process's claims come back soon. */
const SERVICE_ENV = {
  BILLING_BOOTSTRAP_COMPANY: "Crash Co",
  BILLING_BOOTSTRAP_API_KEY: apiKey,
  BILLING_WEBHOOK_ALLOW_PRIVATE: "true",
  BILLING_WEBHOOK_POLL_INTERVAL: "100ms",
  BILLING_WEBHOOK_TIMEOUT: "2s",
  BILLING_WEBHOOK_LEASE: "3s",
  DATABASE_POOL_SIZE: "5",
};

interface UsageEvent {
  external_contract_id: string;
  event_id: string;
  metric: string;
  quantity: number;
  timestamp: string;
}

interface SubmitAnswer {
  accepted: number;
  rejected: number;
  events: { event_id: string | null; status: "accepted" | "rejected"; duplicate?: boolean }[];
}

interface SampleContract {
  id: string;
  /** Metrics the contract rates: events with them are valid. */
  metrics: string[];
}

/** What the clients were told, request by request, and what they sent. */
class Ledger {
  /** Every event id sent, with the one payload it is always sent with. */
  readonly payloads = new Map<string, UsageEvent>();
  /** Valid ids in the order first sent (the pool repeats are drawn from). */
  readonly validIds: string[] = [];
  /** Ids made to be refused (a metric no contract has). */
  readonly invalid = new Set<string>();
  /** id → how many 200 answers said accepted. */
  readonly accepted = new Map<string, number>();
  /** id → how many 200 answers said accepted and new (duplicate: false). */
  readonly fresh = new Map<string, number>();
  readonly rejected = new Set<string>();
  /** Ids sent in requests that failed (no answer). */
  readonly inFailed = new Set<string>();
  /** Ids sent in requests refused with a non-200 status. */
  readonly inRefused = new Set<string>();
  /** Batches whose request failed, waiting for a client to send them again. */
  readonly retries: UsageEvent[][] = [];
  readonly usage = { ok: 0, refused: 0, failed: 0, retried: 0 };
  readonly customers = { acknowledged: new Set<string>(), failed: 0, refused: 0 };
  readonly contracts = { acknowledged: new Set<string>(), failed: 0, refused: 0 };
  /** Anything a client saw that no correct service would answer. */
  readonly anomalies: string[] = [];
  /** Requests in flight, per service process. */
  readonly inFlight = new Map<ServiceProcess, number>();
  /** Requests answered, overall (the kill loop waits for progress on it). */
  answered = 0;
  private counter = 0;

  constructor(private readonly prefix: string) {}

  nextId(kind: string): string {
    this.counter += 1;
    return `${this.prefix}-${kind}-${this.counter}`;
  }

  count(map: Map<string, number>, id: string): void {
    map.set(id, (map.get(id) ?? 0) + 1);
  }
}

/** The service processes that are up right now; clients wait here while none is. */
class Fleet {
  private readonly up: ServiceProcess[] = [];
  private waiters: (() => void)[] = [];
  stopped = false;

  add(service: ServiceProcess): void {
    this.up.push(service);
    for (const wake of this.waiters.splice(0)) wake();
  }

  remove(service: ServiceProcess): void {
    const index = this.up.indexOf(service);
    if (index >= 0) this.up.splice(index, 1);
  }

  /** A random service that is up; undefined once the load is stopped. */
  async pick(): Promise<ServiceProcess | undefined> {
    for (;;) {
      if (this.stopped) return undefined;
      if (this.up.length > 0) return this.up[randomInt(this.up.length)];
      await new Promise<void>((resolve) => this.waiters.push(resolve));
    }
  }

  stop(): void {
    this.stopped = true;
    for (const wake of this.waiters.splice(0)) wake();
  }
}

async function api(
  service: ServiceProcess,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; json: any }> {
  const res = await fetch(`${service.base}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${apiKey}`,
      ...(body === undefined ? {} : { "content-type": "application/json" }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
  const text = await res.text();
  return { status: res.status, json: text ? JSON.parse(text) : undefined };
}

async function expectCreated(service: ServiceProcess, path: string, body: unknown): Promise<any> {
  const res = await api(service, "POST", path, body);
  assert.equal(res.status, 201, `POST ${path}: ${JSON.stringify(res.json)}`);
  return res.json;
}

/** Customers and sample contracts to send usage to; the last one gets a capped rule (the locking path). */
async function setUpContracts(service: ServiceProcess, count: number): Promise<SampleContract[]> {
  const contracts: SampleContract[] = [];
  for (let i = 0; i < count; i++) {
    const customer = await expectCreated(service, "/v1/billing/customers", {
      name: `Crash Customer ${i} ${randomBytes(3).toString("hex")}`,
    });
    const contract = await expectCreated(service, "/v1/billing/contracts", { customer_id: customer.id });
    contracts.push({ id: contract.id, metrics: ["domestic_wire", "international_wire"] });
  }
  const capped = contracts[contracts.length - 1]!;
  await expectCreated(service, `/v1/billing/contracts/${encodeURIComponent(capped.id)}/pricing-rules`, {
    metric: "api_call",
    amount: "0.70",
    monthly_cap: "37.50",
  });
  capped.metrics = ["domestic_wire", "api_call"];
  return contracts;
}

/** A batch of 20 to 100 events: mostly new, some ids sent before (same payload), some repeated inside the batch, some invalid. */
function newBatch(ledger: Ledger, contracts: SampleContract[]): UsageEvent[] {
  const size = randomInt(20, 101);
  const batch: UsageEvent[] = [];
  const timestamp = new Date().toISOString();
  while (batch.length < size) {
    const roll = Math.random();
    if (roll < 0.05 && ledger.validIds.length > 0) {
      batch.push(ledger.payloads.get(ledger.validIds[randomInt(ledger.validIds.length)]!)!);
    } else if (roll < 0.08 && batch.length > 0) {
      batch.push(batch[randomInt(batch.length)]!);
    } else if (roll < 0.11) {
      const event = {
        external_contract_id: contracts[0]!.id,
        event_id: ledger.nextId("bad"),
        metric: "no_such_metric",
        quantity: 1,
        timestamp,
      };
      ledger.payloads.set(event.event_id, event);
      ledger.invalid.add(event.event_id);
      batch.push(event);
    } else {
      const contract = contracts[randomInt(contracts.length)]!;
      const event = {
        external_contract_id: contract.id,
        event_id: ledger.nextId("evt"),
        metric: contract.metrics[randomInt(contract.metrics.length)]!,
        quantity: randomInt(1, 6),
        timestamp,
      };
      ledger.payloads.set(event.event_id, event);
      ledger.validIds.push(event.event_id);
      batch.push(event);
    }
  }
  return batch;
}

/** Sends one batch and writes down what came of it. Never throws. */
async function sendUsage(ledger: Ledger, service: ServiceProcess, batch: UsageEvent[]): Promise<void> {
  ledger.inFlight.set(service, (ledger.inFlight.get(service) ?? 0) + 1);
  try {
    const res = await fetch(`${service.base}/v1/billing/usage`, {
      method: "POST",
      headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
      body: JSON.stringify({ events: batch }),
      signal: AbortSignal.timeout(15_000),
    });
    const text = await res.text();
    if (res.status !== 200) {
      ledger.usage.refused += 1;
      for (const event of batch) ledger.inRefused.add(event.event_id);
      if (res.status < 500) ledger.anomalies.push(`usage batch refused with ${res.status}: ${text.slice(0, 300)}`);
      return;
    }
    ledger.usage.ok += 1;
    const answer = JSON.parse(text) as SubmitAnswer;
    if (answer.events.length !== batch.length) {
      ledger.anomalies.push(`a batch of ${batch.length} was answered with ${answer.events.length} verdicts`);
      return;
    }
    answer.events.forEach((verdict, index) => {
      const id = batch[index]!.event_id;
      if (verdict.event_id !== id)
        ledger.anomalies.push(`verdict ${index} names ${verdict.event_id}, the event was ${id}`);
      if (verdict.status === "accepted") {
        ledger.count(ledger.accepted, id);
        if (verdict.duplicate === false) ledger.count(ledger.fresh, id);
      } else {
        ledger.rejected.add(id);
      }
    });
  } catch {
    // Connection reset, refused or no answer in time: the client cannot tell whether it was stored.
    ledger.usage.failed += 1;
    for (const event of batch) ledger.inFailed.add(event.event_id);
    // Most clients retry a failed batch as it was (same ids); some give up.
    if (Math.random() < 0.7) ledger.retries.push(batch);
  } finally {
    ledger.inFlight.set(service, ledger.inFlight.get(service)! - 1);
    ledger.answered += 1;
  }
}

async function usageClient(ledger: Ledger, fleet: Fleet, contracts: SampleContract[]): Promise<void> {
  for (;;) {
    const service = await fleet.pick();
    if (!service) return;
    const retry = ledger.retries.length > 0 && Math.random() < 0.5 ? ledger.retries.shift() : undefined;
    if (retry) ledger.usage.retried += 1;
    await sendUsage(ledger, service, retry ?? newBatch(ledger, contracts));
  }
}

/** Creates customers, and a sample contract for every third one: each makes a webhook event. */
async function customerClient(ledger: Ledger, fleet: Fleet): Promise<void> {
  for (let n = 0; ; n++) {
    const service = await fleet.pick();
    if (!service) return;
    ledger.inFlight.set(service, (ledger.inFlight.get(service) ?? 0) + 1);
    let customerId: string | undefined;
    try {
      const res = await api(service, "POST", "/v1/billing/customers", {
        name: `Load Customer ${ledger.nextId("cus")}`,
      });
      if (res.status === 201) {
        customerId = res.json.id as string;
        ledger.customers.acknowledged.add(customerId);
      } else {
        ledger.customers.refused += 1;
        if (res.status < 500)
          ledger.anomalies.push(`customer creation refused with ${res.status}: ${JSON.stringify(res.json)}`);
      }
    } catch {
      ledger.customers.failed += 1;
    } finally {
      ledger.inFlight.set(service, ledger.inFlight.get(service)! - 1);
      ledger.answered += 1;
    }
    if (!customerId || n % 3 !== 0) continue;
    const target = await fleet.pick();
    if (!target) return;
    ledger.inFlight.set(target, (ledger.inFlight.get(target) ?? 0) + 1);
    try {
      const res = await api(target, "POST", "/v1/billing/contracts", { customer_id: customerId });
      if (res.status === 201) ledger.contracts.acknowledged.add(res.json.id as string);
      else {
        ledger.contracts.refused += 1;
        if (res.status < 500)
          ledger.anomalies.push(`contract creation refused with ${res.status}: ${JSON.stringify(res.json)}`);
      }
    } catch {
      ledger.contracts.failed += 1;
    } finally {
      ledger.inFlight.set(target, ledger.inFlight.get(target)! - 1);
      ledger.answered += 1;
    }
  }
}

interface Scenario {
  /** DATABASE_URL or BILLING_DATA_DIR. */
  storageEnv: Record<string, string>;
  /** Service processes; the last one is the one killed. */
  processes: number;
  rounds: number;
  /** Called after each kill, before the restart (PGlite: the stale pid file). */
  afterKill?: (killed: ServiceProcess) => void | Promise<void>;
  /** Opens the database for the final checks; for PGlite, only once every service is stopped. */
  openForChecks: () => Promise<Database>;
  /** PGlite: the services are stopped before the stored data is read. */
  stopBeforeChecks: boolean;
  /** Called once the load has stopped, while the services still run. */
  whileRunning?: (services: ServiceProcess[]) => Promise<void>;
}

/** The stored data, read directly from the tables. */
async function readStored(db: Database) {
  const events = await db.query<{ id: string; contract_id: string; metric: string; quantity: string; copies: string }>(
    `SELECT id, contract_id, metric, quantity::text AS quantity, count(*) OVER (PARTITION BY company_id, id) AS copies FROM usage_events`,
  );
  const customers = await db.query<{ id: string }>(`SELECT id FROM customers`);
  const contracts = await db.query<{ id: string }>(`SELECT id FROM contracts`);
  const outbox = await db.query<{
    id: string;
    type: string;
    object_id: string;
    deliveries: string;
    statuses: string[] | null;
  }>(
    `SELECT ev.id, ev.type, (ev.body::jsonb -> 'data' -> 'object' ->> 'id') AS object_id,
            count(d.id) AS deliveries, array_remove(array_agg(d.status), NULL) AS statuses
       FROM events ev LEFT JOIN webhook_deliveries d ON d.company_id = ev.company_id AND d.event_id = ev.id
      GROUP BY ev.company_id, ev.id, ev.type, ev.body`,
  );
  return { events: events.rows, customers: customers.rows, contracts: contracts.rows, outbox: outbox.rows };
}

async function runScenario(
  t: TestContext,
  procs: ReturnType<typeof serviceProcesses>,
  receiver: Receiver,
  scenario: Scenario,
): Promise<void> {
  const started = Date.now();
  const env = { ...SERVICE_ENV, ...scenario.storageEnv };
  const services = await Promise.all(Array.from({ length: scenario.processes }, () => procs.start(env)));
  await expectCreated(services[0]!, "/v1/webhook-endpoints", { url: receiver.url });
  const contracts = await setUpContracts(services[0]!, 3);

  const ledger = new Ledger(`crash-${randomBytes(4).toString("hex")}`);
  const fleet = new Fleet();
  for (const service of services) fleet.add(service);
  const clients = [
    usageClient(ledger, fleet, contracts),
    usageClient(ledger, fleet, contracts),
    usageClient(ledger, fleet, contracts),
    customerClient(ledger, fleet),
  ];

  // Kill the last process at a random moment under load, restart it on the same port and database; again.
  let victim = services[services.length - 1]!;
  let killedWithRequestsInFlight = 0;
  const restartMs: number[] = [];
  try {
    for (let round = 1; round <= scenario.rounds; round++) {
      await new Promise((resolve) => setTimeout(resolve, randomInt(100, 601)));
      fleet.remove(victim);
      if ((ledger.inFlight.get(victim) ?? 0) > 0) killedWithRequestsInFlight += 1;
      await kill(victim);
      assert.equal(victim.child.signalCode, "SIGKILL");
      await scenario.afterKill?.(victim);
      const restarting = Date.now();
      const restarted = await procs.start(env, { port: victim.port });
      restartMs.push(Date.now() - restarting);
      services[services.length - 1] = restarted;
      victim = restarted;
      fleet.add(restarted);
    }
    // Some work on the last incarnation too, then stop the load.
    const answeredBefore = ledger.answered;
    await waitFor("requests answered after the last restart", () => ledger.answered >= answeredBefore + 8, 20_000);
  } finally {
    fleet.stop();
    await Promise.all(clients);
  }
  const loadDone = Date.now();

  // Nothing a correct service could answer went wrong on the way.
  assert.deepEqual(ledger.anomalies, []);
  assert.ok(killedWithRequestsInFlight > 0, "at least one kill caught requests in flight");
  assert.ok(ledger.usage.ok > scenario.rounds, `usage batches were acknowledged (${ledger.usage.ok})`);
  assert.ok(ledger.accepted.size > 0 && ledger.rejected.size > 0);

  // Webhooks: each acknowledged customer and contract has been announced to the receiver.
  const received = () =>
    new Set(receiver.requests.map((r) => (JSON.parse(r.body) as { data: { object: { id: string } } }).data.object.id));
  await waitFor(
    "every acknowledged customer and contract to be announced to the receiver",
    () => {
      const seen = received();
      return [...ledger.customers.acknowledged, ...ledger.contracts.acknowledged].every((id) => seen.has(id));
    },
    20_000,
  );

  await scenario.whileRunning?.(services);
  let db: Database;
  if (scenario.stopBeforeChecks) {
    for (const service of services) {
      const exit = await stop(service);
      assert.deepEqual(exit, { code: 0, signal: null }, `SIGTERM ends the service cleanly: ${service.output.join("")}`);
    }
    db = await scenario.openForChecks();
  } else {
    db = await scenario.openForChecks();
    // Leases of the killed processes' attempts run out after 3 s; then every delivery succeeds (the receiver answers 200).
    await waitFor(
      "every webhook delivery to succeed",
      async () =>
        (await db.query(`SELECT 1 FROM webhook_deliveries WHERE status <> 'succeeded' LIMIT 1`)).rowCount === 0,
      20_000,
    );
  }

  let storedCount: number;
  try {
    const stored = await readStored(db);
    storedCount = stored.events.length;
    const storedById = new Map(stored.events.map((e) => [e.id, e]));

    // Usage events.
    for (const e of stored.events) {
      assert.equal(Number(e.copies), 1, `event ${e.id} stored once`);
      const sent = ledger.payloads.get(e.id);
      assert.ok(sent, `stored event ${e.id} was sent by a client`);
      assert.deepEqual(
        { contract: e.contract_id, metric: e.metric, quantity: Number(e.quantity) },
        { contract: sent.external_contract_id, metric: sent.metric, quantity: sent.quantity },
        `event ${e.id} stored as sent`,
      );
    }
    for (const id of ledger.accepted.keys()) assert.ok(storedById.has(id), `event ${id}, answered accepted, is stored`);
    for (const [id, times] of ledger.fresh) assert.equal(times, 1, `event ${id} was answered as new ${times} times`);
    for (const id of ledger.rejected) {
      assert.ok(ledger.invalid.has(id), `valid event ${id} was answered rejected`);
      assert.equal(storedById.has(id), false, `event ${id}, answered rejected, is not stored`);
    }
    for (const id of ledger.invalid) {
      assert.equal(ledger.accepted.has(id), false, `invalid event ${id} was answered accepted`);
      assert.equal(storedById.has(id), false, `invalid event ${id} is not stored`);
    }
    for (const id of ledger.inRefused) {
      if (!ledger.accepted.has(id) && !ledger.inFailed.has(id))
        assert.equal(storedById.has(id), false, `event ${id}, only ever refused, is not stored`);
    }
    const unacknowledgedStored = [...storedById.keys()].filter((id) => !ledger.accepted.has(id));
    for (const id of unacknowledgedStored)
      assert.ok(
        ledger.inFailed.has(id),
        `event ${id} is stored though no request that carried it could have stored it`,
      );

    // Customers, contracts and their events (written in the same transaction).
    const customerIds = new Set(stored.customers.map((c) => c.id));
    const contractIds = new Set(stored.contracts.map((c) => c.id));
    for (const id of ledger.customers.acknowledged)
      assert.ok(customerIds.has(id), `customer ${id}, answered 201, exists`);
    for (const id of ledger.contracts.acknowledged)
      assert.ok(contractIds.has(id), `contract ${id}, answered 201, exists`);
    const announced = (type: string) => new Set(stored.outbox.filter((e) => e.type === type).map((e) => e.object_id));
    assert.deepEqual(
      announced("customer.created"),
      customerIds,
      "one customer.created event per customer, none without its customer",
    );
    assert.deepEqual(announced("contract.created"), contractIds, "one contract.created event per contract");
    assert.equal(stored.outbox.length, customerIds.size + contractIds.size);

    // Deliveries: one per event, delivered (and then received) or still pending.
    const seen = received();
    for (const e of stored.outbox) {
      assert.equal(Number(e.deliveries), 1, `event ${e.id} (${e.type}) has one delivery`);
      const [status] = e.statuses ?? [];
      assert.ok(status === "succeeded" || status === "pending", `the delivery of ${e.id} is ${status}`);
      if (status === "succeeded") assert.ok(seen.has(e.object_id), `the delivered event ${e.id} reached the receiver`);
    }
    assert.ok(receiver.requests.every((r) => r.headers["service-event-id"] !== undefined));

    t.diagnostic(
      `${scenario.processes} process(es), ${scenario.rounds} kills (${killedWithRequestsInFlight} with requests in flight), restarts ready in ${restartMs.join(", ")} ms, ` +
        `setup and load ${((loadDone - started) / 1000).toFixed(1)} s: ` +
        `usage requests ok ${ledger.usage.ok}, failed ${ledger.usage.failed}, refused ${ledger.usage.refused}, retried ${ledger.usage.retried}; ` +
        `events stored ${storedCount} (accepted ${ledger.accepted.size}, rejected ${ledger.rejected.size}, stored without an answer ${unacknowledgedStored.length}); ` +
        `customers ${customerIds.size} (failed requests ${ledger.customers.failed}), contracts ${contractIds.size}; ` +
        `webhook events ${stored.outbox.length}, pending ${stored.outbox.filter((e) => e.statuses?.[0] === "pending").length}, receiver got ${receiver.requests.length} requests`,
    );
  } finally {
    await db.close();
  }

  // The invariants, as an operator checks them.
  const report = await assertVerifyPasses(scenario.storageEnv);
  assert.equal(report.events, storedCount);
}

describe("crash safety [postgres]", { skip: skipPostgres }, () => {
  const procs = serviceProcesses();
  const databases: TestDatabase[] = [];
  const receivers: Receiver[] = [];
  before(() => ensureCliBuilt());
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    for (const database of databases) await database.drop();
  });

  async function freshDatabase(): Promise<string> {
    const database = await createTestDatabase("postgres");
    databases.push(database);
    if (database.storage.kind !== "postgres") throw new Error("expected PostgreSQL");
    return database.storage.url;
  }

  for (const processes of [1, 2]) {
    const title =
      processes === 1
        ? `one service process SIGKILLed ${PG_ROUNDS} times under load loses or doubles nothing acknowledged`
        : `two service processes share the load; one SIGKILLed ${PG_ROUNDS} times; nothing acknowledged is lost or doubled`;
    it(title, { timeout: TEST_TIMEOUT_MS }, async (t) => {
      const url = await freshDatabase();
      const receiver = await startReceiver();
      receivers.push(receiver);
      await runScenario(t, procs, receiver, {
        storageEnv: { DATABASE_URL: url },
        processes,
        rounds: PG_ROUNDS,
        openForChecks: () => openDatabase({ kind: "postgres", url, poolSize: 2 }),
        stopBeforeChecks: false,
      });
    });
  }
});

describe("crash safety [pglite]", () => {
  const procs = serviceProcesses();
  const folders: string[] = [];
  const receivers: Receiver[] = [];
  before(() => ensureCliBuilt());
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
    for (const folder of folders) rmSync(folder, { recursive: true, force: true });
  });

  it(`one service process on a data folder SIGKILLed ${PGLITE_ROUNDS} times: its stale pid file does not block the restart (a live holder still does), and nothing acknowledged is lost or doubled`, {
    timeout: TEST_TIMEOUT_MS,
  }, async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), "billing-crash-"));
    folders.push(dataDir);
    const receiver = await startReceiver();
    receivers.push(receiver);
    const lockFile = join(dataDir, "billing.pid");
    await runScenario(t, procs, receiver, {
      storageEnv: { BILLING_DATA_DIR: dataDir },
      processes: 1,
      rounds: PGLITE_ROUNDS,
      afterKill: async (killed) => {
        // The dead process could not remove its pid file: it still names the dead process.
        assert.equal(readFileSync(lockFile, "utf8").trim(), String(killed.pid), "the killed process left its pid file");
        assert.throws(() => process.kill(killed.pid, 0), { code: "ESRCH" }, "the process named there is gone");
      },
      whileRunning: async ([service]) => {
        // The lock still keeps a second process out of a folder whose holder is alive.
        const run = await runBilling(["verify"], { BILLING_DATA_DIR: dataDir });
        assert.equal(
          run.code,
          1,
          `billing verify beside the running service exited ${run.code}: ${run.stdout}${run.stderr}`,
        );
        assert.match(run.stderr, new RegExp(`in use by process ${service!.pid}`));
      },
      openForChecks: () => openDatabase({ kind: "pglite", dataDir }),
      stopBeforeChecks: true,
    });
  });
});
