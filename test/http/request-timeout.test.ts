import assert from "node:assert/strict";
import { connect } from "node:net";
import { once } from "node:events";
import { it } from "node:test";
import { describeEachEngine } from "../support/harness.js";

describeEachEngine(
  "request timeout",
  (t) => {
    it("answers 408 and closes the connection of a client that stops sending its request half way", {
      timeout: 20_000,
    }, async () => {
      const { key } = await t().newCompany();
      const address = await t().app.http.listen({ port: 0, host: "127.0.0.1" });
      const { port } = new URL(address);
      const socket = connect(Number(port), "127.0.0.1");
      await once(socket, "connect");
      const startedAt = Date.now();
      // Headers promise 100 bytes of body; only one arrives. Nothing more is ever sent.
      socket.write(
        `POST /v1/billing/usage HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAuthorization: Bearer ${key}\r\nContent-Length: 100\r\n\r\n{`,
      );
      let received = "";
      socket.on("data", (chunk) => (received += chunk.toString()));
      await once(socket, "close");
      const elapsedMs = Date.now() - startedAt;
      assert.match(received, /^HTTP\/1\.1 408 /);
      assert.deepEqual(JSON.parse(received.slice(received.indexOf("\r\n\r\n") + 4)), {
        error: "The request was not received in time",
        code: "request_timeout",
      });
      assert.ok(elapsedMs >= 900, `closed after ${elapsedMs} ms, before the deadline`);
      assert.ok(elapsedMs < 10_000, `closed after ${elapsedMs} ms`);
      // The server still answers everyone else.
      const health = await fetch(`${address}/healthz`);
      assert.equal(health.status, 200);
    });
  },
  { env: { BILLING_REQUEST_TIMEOUT: "1s" } },
);

describeEachEngine("database deadlines", (t, engine) => {
  it("cancels a statement that runs longer than its deadline on PostgreSQL", {
    skip: engine === "pglite" ? "PGlite is one in-process session: no server-side deadline" : false,
  }, async () => {
    const { openDatabase } = await import("../../src/db/open-database.js");
    const url = process.env.TEST_DATABASE_URL!;
    const db = await openDatabase({ kind: "postgres", url, poolSize: 1, statementTimeoutMs: 200 });
    try {
      await assert.rejects(db.query("SELECT pg_sleep(5)"), (error: { code?: string }) => error.code === "57014");
      const { rows } = await db.query<{ ok: number }>("SELECT 1 AS ok");
      assert.equal(rows[0]!.ok, 1);
      const settings = await t().app.db.query<{ statement_timeout: string }>("SHOW statement_timeout");
      assert.equal(settings.rows[0]!.statement_timeout, "1min");
    } finally {
      await db.close();
    }
  });
});
