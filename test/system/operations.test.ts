/**
 * Operations (issue 8, item 5): readiness follows the database, SIGTERM is a graceful shutdown, and no
 * secret reaches the logs. Readiness runs the service in-process against PostgreSQL through a TCP proxy
 * the test can cut; the other two run the real service as a child process (`node --import tsx src/main.ts`),
 * on PGlite always and on PostgreSQL when TEST_DATABASE_URL is set. Every wait is bounded.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { connect, createServer, type AddressInfo, type Server, type Socket } from "node:net";
import { after, describe, it } from "node:test";
import { createApp, type App } from "../../src/app.js";
import { createTestDatabase, postgresSkip, testConfig, type TestDatabase } from "../support/harness.js";
import { waitFor } from "../support/assertions.js";
import { serviceProcesses, stop, type ServiceProcess } from "../support/service-process.js";
import { startReceiver, type Receiver } from "../support/webhook-receiver.js";

const skipPostgres = postgresSkip();

/** A TCP proxy to host:port that the test can cut (close the listener, destroy every socket) and restore on the same port. */
async function tcpProxy(host: string, targetPort: number) {
  const sockets = new Set<Socket>();
  let server: Server | undefined;
  let port = 0;

  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  };

  async function open(): Promise<void> {
    server = createServer((client) => {
      const upstream = connect(targetPort, host);
      track(client);
      track(upstream);
      client.on("close", () => upstream.destroy());
      upstream.on("close", () => client.destroy());
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve, reject) => {
      server!.once("error", reject);
      server!.listen(port, "127.0.0.1", () => resolve());
    });
    port = (server.address() as AddressInfo).port;
  }

  await open();
  return {
    get port() {
      return port;
    },
    get connections() {
      return sockets.size;
    },
    /** The database "goes away": nothing listens any more and every open connection is cut. */
    async cut(): Promise<void> {
      const closed = new Promise<void>((resolve) => server!.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
    /** The database is back, on the same port. */
    restore: open,
  };
}

describe("readiness follows the database [postgres]", { skip: skipPostgres }, () => {
  let database: TestDatabase | undefined;
  let app: App | undefined;
  let proxy: Awaited<ReturnType<typeof tcpProxy>> | undefined;
  after(async () => {
    await app?.close();
    await proxy?.cut();
    await database?.drop();
  });

  it("answers /readyz 503 while PostgreSQL is unreachable and 200 again once it is back, with /healthz 200 throughout", {
    timeout: 60_000,
  }, async () => {
    database = await createTestDatabase("postgres");
    if (database.storage.kind !== "postgres") throw new Error("expected PostgreSQL");
    const real = new URL(database.storage.url);
    proxy = await tcpProxy(real.hostname, Number(real.port || 5432));
    const viaProxy = new URL(real);
    viaProxy.hostname = "127.0.0.1";
    viaProxy.port = String(proxy.port);
    const cut = proxy.cut;
    const restore = proxy.restore;
    app = await createApp(testConfig({ DATABASE_URL: viaProxy.toString(), DATABASE_POOL_SIZE: "3" }));
    const company = await app.services.access.createCompany("Readiness Co");
    const { key } = await app.services.access.createApiKey(company.id, {});
    const get = (url: string, withKey = false) =>
      app!.http.inject({ method: "GET", url, headers: withKey ? { authorization: `Bearer ${key}` } : {} });

    const ready = await get("/readyz");
    assert.equal(ready.statusCode, 200, ready.body);
    assert.deepEqual(ready.json(), { status: "ready" });
    assert.ok(proxy.connections > 0, "the service reaches the database through the proxy");

    await cut();
    const cutAt = Date.now();
    await waitFor("/readyz to answer 503", async () => (await get("/readyz")).statusCode === 503, 15_000);
    const cutNoticedMs = Date.now() - cutAt;
    const unready = await get("/readyz");
    assert.equal(unready.statusCode, 503);
    assert.deepEqual(unready.json(), { status: "database unavailable" });
    assert.equal(
      (await get("/healthz")).statusCode,
      200,
      "the process is alive: liveness does not follow the database",
    );
    const during = await get("/v1/billing/customers", true);
    assert.ok(during.statusCode >= 500, `an API call fails while the database is away (${during.statusCode})`);

    await restore();
    const restoredAt = Date.now();
    await waitFor("/readyz to answer 200 again", async () => (await get("/readyz")).statusCode === 200, 15_000);
    const backMs = Date.now() - restoredAt;
    const afterwards = await get("/v1/billing/customers", true);
    assert.equal(afterwards.statusCode, 200, `the API works again: ${afterwards.body}`);
    assert.ok(cutNoticedMs < 15_000 && backMs < 15_000);
  });
});

/** The storage settings for a child service on each engine; PostgreSQL only when TEST_DATABASE_URL is set. */
function engines(): { name: string; skip: string | false; storage: () => Promise<Record<string, string>> }[] {
  const databases: TestDatabase[] = [];
  after(async () => {
    for (const database of databases) await database.drop();
  });
  return [
    { name: "pglite", skip: false, storage: async () => ({ BILLING_DATA_DIR: "memory://" }) },
    {
      name: "postgres",
      skip: skipPostgres,
      storage: async () => {
        const database = await createTestDatabase("postgres");
        databases.push(database);
        if (database.storage.kind !== "postgres") throw new Error("expected PostgreSQL");
        return { DATABASE_URL: database.storage.url };
      },
    },
  ];
}

/** Resolves true when a new TCP connection to the port is refused, false when one is accepted. */
function connectionRefused(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(false);
    });
    socket.once("error", (error: NodeJS.ErrnoException) => resolve(error.code === "ECONNREFUSED"));
  });
}

describe("graceful shutdown on SIGTERM", () => {
  const procs = serviceProcesses();
  const receivers: Receiver[] = [];
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
  });

  for (const engine of engines()) {
    it(`[${engine.name}] finishes the request in flight (200), refuses new connections meanwhile, and exits 0`, {
      skip: engine.skip,
      timeout: 60_000,
    }, async () => {
      const apiKey = `sk_test_shutdown_${randomBytes(12).toString("hex")}`;
      const service = await procs.start({
        ...(await engine.storage()),
        BILLING_BOOTSTRAP_COMPANY: "Shutdown Co",
        BILLING_BOOTSTRAP_API_KEY: apiKey,
        BILLING_WEBHOOK_ALLOW_PRIVATE: "true",
      });
      const receiver = await startReceiver();
      receivers.push(receiver);
      receiver.hang(); // holds the test event until the test lets it go

      const headers = { authorization: `Bearer ${apiKey}`, "content-type": "application/json" };
      const created = await fetch(`${service.base}/v1/webhook-endpoints`, {
        method: "POST",
        headers,
        body: JSON.stringify({ url: receiver.url }),
      });
      assert.equal(created.status, 201);
      const endpoint = (await created.json()) as { id: string };

      // POST .../test is synchronous: it answers once the receiver has.
      let settled = false;
      const inFlight = fetch(`${service.base}/v1/webhook-endpoints/${endpoint.id}/test`, {
        method: "POST",
        headers,
        body: JSON.stringify({ type: "customer.created" }),
        signal: AbortSignal.timeout(30_000),
      }).finally(() => {
        settled = true;
      });
      await waitFor("the test event to reach the receiver", () => receiver.requests.length === 1, 15_000);

      service.child.kill("SIGTERM");
      await waitFor("the service to stop accepting connections", () => connectionRefused(service.port), 10_000);
      assert.equal(settled, false, "the request in flight is still waiting for its answer");
      assert.ok(service.alive(), "the process waits for the request in flight");

      receiver.releaseHeld(200);
      const res = await inFlight;
      assert.equal(res.status, 200);
      const body = (await res.json()) as { object: string; status: string; status_code: number };
      assert.deepEqual(
        { object: body.object, status: body.status, status_code: body.status_code },
        { object: "webhook_test", status: "succeeded", status_code: 200 },
      );

      const exit = await stop(service, 20_000);
      assert.deepEqual(exit, { code: 0, signal: null }, `exit after SIGTERM: ${service.output.join("")}`);
      assert.equal(await connectionRefused(service.port), true, "nothing listens after the exit");
    });
  }
});

describe("secrets never reach the logs", () => {
  const procs = serviceProcesses();
  const receivers: Receiver[] = [];
  after(async () => {
    await Promise.all(receivers.map((r) => r.close()));
  });

  for (const engine of engines()) {
    it(`[${engine.name}] a whole session at LOG_LEVEL=debug logs no key, token, password or signing secret`, {
      skip: engine.skip,
      timeout: 60_000,
    }, async () => {
      const hex = (n: number) => randomBytes(n).toString("hex");
      const adminToken = `admin_${randomBytes(24).toString("base64url")}`;
      const bootstrapKey = `sk_test_bootstrap_${hex(16)}`;
      const password = `Pw-${hex(12)}`;
      const rejectedPassword = `Pw-${hex(12)}`;
      const wrongAdminToken = `admin_${randomBytes(24).toString("base64url")}`;
      const receiver = await startReceiver();
      receivers.push(receiver);

      const service: ServiceProcess = await procs.start({
        ...(await engine.storage()),
        LOG_LEVEL: "debug",
        BILLING_ADMIN_TOKEN: adminToken,
        BILLING_BOOTSTRAP_COMPANY: "Secretive Co",
        BILLING_BOOTSTRAP_API_KEY: bootstrapKey,
        BILLING_WEBHOOK_ALLOW_PRIVATE: "true",
        BILLING_WEBHOOK_POLL_INTERVAL: "100ms",
      });

      let calls = 0;
      const call = async (method: string, path: string, auth: Record<string, string>, body?: unknown) => {
        calls += 1;
        const res = await fetch(`${service.base}${path}`, {
          method,
          headers: { ...auth, ...(body === undefined ? {} : { "content-type": "application/json" }) },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(15_000),
        });
        const text = await res.text();
        return { status: res.status, json: text ? JSON.parse(text) : undefined };
      };
      const admin = { authorization: `Bearer ${adminToken}` };
      const expectStatus = (res: { status: number; json: any }, status: number) =>
        assert.equal(res.status, status, JSON.stringify(res.json));

      // Operators: a company, an API key, a user with a password; a refused user and a wrong admin token.
      const company = await call("POST", "/admin/v1/companies", admin, { name: "Logged Co" });
      expectStatus(company, 201);
      const created = await call("POST", `/admin/v1/companies/${company.json.id}/api-keys`, admin, {
        name: "session key",
      });
      expectStatus(created, 201);
      const apiKey = created.json.key as string;
      const spare = await call("POST", `/admin/v1/companies/${company.json.id}/api-keys`, admin, {});
      expectStatus(spare, 201);
      const revokedKey = spare.json.key as string;
      expectStatus(
        await call("POST", `/admin/v1/companies/${company.json.id}/users`, admin, {
          email: "ops@logged.example",
          password,
        }),
        201,
      );
      expectStatus(
        await call("POST", `/admin/v1/companies/${company.json.id}/users`, admin, {
          email: "not an email",
          password: rejectedPassword,
        }),
        400,
      );
      expectStatus(
        await call("POST", "/admin/v1/companies", { authorization: `Bearer ${wrongAdminToken}` }, { name: "Nope" }),
        401,
      );

      // A client: customers, a webhook endpoint and its secret, a rotation, a test event, a real event delivered.
      const bearer = { authorization: `Bearer ${apiKey}` };
      expectStatus(await call("POST", "/v1/billing/customers", bearer, { name: "First Customer" }), 201);
      const endpoint = await call("POST", "/v1/webhook-endpoints", bearer, { url: receiver.url });
      expectStatus(endpoint, 201);
      const firstSecret = endpoint.json.secret as string;
      const rotated = await call("POST", `/v1/webhook-endpoints/${endpoint.json.id}/rotate-secret`, bearer);
      expectStatus(rotated, 200);
      const secondSecret = rotated.json.secret as string;
      assert.notEqual(firstSecret, secondSecret);
      expectStatus(
        await call("POST", `/v1/webhook-endpoints/${endpoint.json.id}/test`, bearer, { type: "contract.created" }),
        200,
      );
      expectStatus(
        await call("POST", "/v1/billing/customers", { "x-api-key": apiKey }, { name: "Second Customer" }),
        201,
      );
      expectStatus(await call("GET", `/v1/webhook-endpoints/${endpoint.json.id}`, bearer), 200);
      expectStatus(await call("GET", "/v1/billing/customers", { authorization: `Bearer ${bootstrapKey}` }), 200);
      expectStatus(await call("DELETE", `/admin/v1/api-keys/${spare.json.id}`, admin), 200);
      expectStatus(await call("GET", "/v1/billing/customers", { authorization: `Bearer ${revokedKey}` }), 401);
      expectStatus(await call("GET", "/v1/billing/customers", { "x-api-key": `${apiKey}x` }), 401);
      // The dashboard: sign-up with a password, a session cookie and its CSRF token, a key created on a page,
      // a failed sign-in.
      const dashboardPassword = `Dash-${hex(12)}`;
      const wrongDashboardPassword = `Dash-${hex(12)}`;
      const cookies = new Map<string, string>();
      const browse = async (method: string, path: string, form?: Record<string, string>) => {
        calls += 1;
        const res = await fetch(`${service.base}${path}`, {
          method,
          redirect: "manual",
          headers: {
            cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; "),
            ...(form ? { "content-type": "application/x-www-form-urlencoded" } : {}),
          },
          body: form ? new URLSearchParams(form).toString() : undefined,
          signal: AbortSignal.timeout(15_000),
        });
        for (const line of res.headers.getSetCookie()) {
          const [pair] = line.split(";");
          const [name, value] = [pair!.slice(0, pair!.indexOf("=")), pair!.slice(pair!.indexOf("=") + 1)];
          if (value) cookies.set(name, value);
          else cookies.delete(name);
        }
        return { status: res.status, body: await res.text() };
      };
      const csrfOf = (body: string) => /name="_csrf" value="([^"]+)"/.exec(body)![1]!;
      const signupForm = await browse("GET", "/signup");
      const preloginToken = csrfOf(signupForm.body);
      assert.equal(
        (
          await browse("POST", "/signup", {
            company: "Dash Logged",
            email: "owner@dash-logged.example",
            password: dashboardPassword,
            _csrf: preloginToken,
          })
        ).status,
        303,
      );
      const sessionToken = cookies.get("__Host-billing_session")!;
      const keysPage = await browse("GET", "/settings/api-keys");
      const sessionCsrf = csrfOf(keysPage.body);
      const keyPage = await browse("POST", "/settings/api-keys", { name: "dashboard key", _csrf: sessionCsrf });
      assert.equal(keyPage.status, 200);
      const dashboardKey = /id="new-api-key">([^<]+)</.exec(keyPage.body)![1]!;
      assert.equal((await browse("POST", "/logout", { _csrf: sessionCsrf })).status, 303);
      const loginForm = await browse("GET", "/login");
      assert.equal(
        (
          await browse("POST", "/login", {
            email: "owner@dash-logged.example",
            password: wrongDashboardPassword,
            _csrf: csrfOf(loginForm.body),
          })
        ).status,
        401,
      );

      await waitFor(
        "the webhook for the second customer to be delivered",
        () =>
          receiver.requests.some(
            (r) =>
              (JSON.parse(r.body) as { data: { object: { name?: string } } }).data.object.name === "Second Customer",
          ),
        15_000,
      );

      const exit = await stop(service);
      assert.deepEqual(exit, { code: 0, signal: null });
      const logs = service.output.join("");

      // The session was logged (one line per request at least), at debug level.
      const lines = logs.split("\n").filter(Boolean);
      const requestLines = lines.filter((line) => line.includes('"msg":"request"'));
      assert.ok(requestLines.length >= calls, `${requestLines.length} request lines for ${calls} calls`);
      assert.ok(
        lines.every((line) => line.startsWith("{")),
        "every line is a JSON log record",
      );

      const secrets: Record<string, string> = {
        "admin token": adminToken,
        "wrong admin token": wrongAdminToken,
        "bootstrap API key": bootstrapKey,
        "created API key": apiKey,
        "revoked API key": revokedKey,
        "user password": password,
        "refused user's password": rejectedPassword,
        "webhook secret": firstSecret,
        "rotated webhook secret": secondSecret,
        "dashboard password": dashboardPassword,
        "wrong dashboard password": wrongDashboardPassword,
        "dashboard session token": sessionToken,
        "dashboard CSRF token": sessionCsrf,
        "sign-up form token": preloginToken,
        "API key created in the dashboard": dashboardKey,
      };
      for (const [what, secret] of Object.entries(secrets)) {
        assert.ok(secret.length >= 16, `${what} is a real secret`);
        assert.equal(logs.includes(secret), false, `the ${what} appears in the logs`);
        // Also its random part alone (after a prefix such as sk_ or whsec_).
        const tail = secret.slice(secret.lastIndexOf("_") + 1);
        if (tail.length >= 12)
          assert.equal(logs.includes(tail), false, `the random part of the ${what} appears in the logs`);
      }
    });
  }
});
