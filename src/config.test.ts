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

  it("writes one usage call per company at a time unless BILLING_INGEST_CALLS_IN_FLIGHT says otherwise (1 to 64)", () => {
    assert.equal(loadConfig(base).ingestCallsInFlight, 1);
    assert.equal(loadConfig({ ...base, BILLING_INGEST_CALLS_IN_FLIGHT: "3" }).ingestCallsInFlight, 3);
    assert.equal(loadConfig({ ...base, BILLING_INGEST_CALLS_IN_FLIGHT: "" }).ingestCallsInFlight, 1);
    for (const bad of ["0", "-1", "1.5", "65", "two"]) {
      assert.throws(() => loadConfig({ ...base, BILLING_INGEST_CALLS_IN_FLIGHT: bad }), ConfigError, bad);
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
