import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "./config.js";

const base = { BILLING_DATA_DIR: "memory://" };

describe("configuration: request timeout, ingestion and the embedded database", () => {
  it("gives a client 30 s to send a request unless BILLING_REQUEST_TIMEOUT says otherwise", () => {
    assert.equal(loadConfig(base).requestTimeoutMs, 30_000);
    assert.equal(loadConfig({ ...base, BILLING_REQUEST_TIMEOUT: "5s" }).requestTimeoutMs, 5_000);
    assert.throws(() => loadConfig({ ...base, BILLING_REQUEST_TIMEOUT: "soon" }), ConfigError);
  });

  it("writes usage in 2 lanes per company with one call in flight each unless BILLING_INGEST_LANES / _CALLS_IN_FLIGHT say otherwise (1 to 64)", () => {
    assert.deepEqual(loadConfig(base).ingest, { lanes: 2, callsInFlight: 1 });
    assert.deepEqual(loadConfig({ ...base, BILLING_INGEST_LANES: "1", BILLING_INGEST_CALLS_IN_FLIGHT: "3" }).ingest, { lanes: 1, callsInFlight: 3 });
    assert.deepEqual(loadConfig({ ...base, BILLING_INGEST_LANES: "", BILLING_INGEST_CALLS_IN_FLIGHT: "" }).ingest, { lanes: 2, callsInFlight: 1 });
    for (const name of ["BILLING_INGEST_LANES", "BILLING_INGEST_CALLS_IN_FLIGHT"]) {
      for (const bad of ["0", "-1", "1.5", "65", "two"]) {
        assert.throws(() => loadConfig({ ...base, [name]: bad }), (error: Error) => error instanceof ConfigError && error.message.includes(name), `${name}=${bad}`);
      }
    }
  });

  it("runs the embedded database on its own thread with 16 MB of shared buffers unless told otherwise", () => {
    const storage = loadConfig(base).storage;
    assert.deepEqual(storage, { kind: "pglite", dataDir: "memory://", runOn: "thread" });
    assert.deepEqual(loadConfig({ ...base, BILLING_PGLITE_THREAD: "off", BILLING_PGLITE_SHARED_BUFFERS: "32MB" }).storage, {
      kind: "pglite",
      dataDir: "memory://",
      runOn: "in-process",
      sharedBuffers: "32MB",
    });
  });
});

describe("configuration: the admin token and the failed-authentication throttle", () => {
  it("refuses an admin token shorter than 32 characters, naming the variable and the minimum; empty means unset", () => {
    const short = "a".repeat(31);
    assert.throws(
      () => loadConfig({ ...base, BILLING_ADMIN_TOKEN: short }),
      (error: Error) => error instanceof ConfigError && /^BILLING_ADMIN_TOKEN must be at least 32 characters long/.test(error.message) && !error.message.includes(short),
    );
    assert.equal(loadConfig({ ...base, BILLING_ADMIN_TOKEN: "a".repeat(32) }).adminToken, "a".repeat(32));
    assert.equal(loadConfig({ ...base, BILLING_ADMIN_TOKEN: "" }).adminToken, undefined);
    assert.equal(loadConfig(base).adminToken, undefined);
  });

  it("allows 60 failed authentications per address and minute unless BILLING_AUTH_FAILURES says otherwise; off disables", () => {
    assert.equal(loadConfig(base).authFailuresPerMinute, 60);
    assert.equal(loadConfig({ ...base, BILLING_AUTH_FAILURES: "" }).authFailuresPerMinute, 60);
    assert.equal(loadConfig({ ...base, BILLING_AUTH_FAILURES: "5" }).authFailuresPerMinute, 5);
    assert.equal(loadConfig({ ...base, BILLING_AUTH_FAILURES: "off" }).authFailuresPerMinute, null);
    assert.equal(loadConfig({ ...base, BILLING_AUTH_FAILURES: "OFF" }).authFailuresPerMinute, null);
    assert.equal(loadConfig({ ...base, BILLING_RATE_LIMIT: "off" }).authFailuresPerMinute, 60, "not tied to the rate limit");
    for (const bad of ["0", "-1", "1.5", "1e3", "ten", "60/m", "1000001", "none"]) {
      assert.throws(
        () => loadConfig({ ...base, BILLING_AUTH_FAILURES: bad }),
        (error: Error) => error instanceof ConfigError && error.message.startsWith("BILLING_AUTH_FAILURES must be") && error.message.includes(`'${bad}'`),
        bad,
      );
    }
  });
});

describe("configuration: issuing invoices", () => {
  it("issues drafts 3 days after their period unless BILLING_INVOICE_GRACE says otherwise; off: by hand only", () => {
    const grace = (value?: string) => loadConfig({ BILLING_DATA_DIR: "memory://", ...(value === undefined ? {} : { BILLING_INVOICE_GRACE: value }) }).invoiceGraceMs;
    assert.equal(grace(), 3 * 86_400_000);
    assert.equal(grace(""), 3 * 86_400_000);
    assert.equal(grace("12h"), 12 * 3_600_000);
    assert.equal(grace("0s"), 0);
    assert.equal(grace("1.5d"), 36 * 3_600_000);
    assert.equal(grace("off"), null);
    for (const bad of ["3", "three days", "-1d", "3w", "on"]) {
      assert.throws(() => grace(bad), (e: Error) => e instanceof ConfigError && /BILLING_INVOICE_GRACE/.test(e.message) && /or off/.test(e.message), bad);
    }
  });
});
