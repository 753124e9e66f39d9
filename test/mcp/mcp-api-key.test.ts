/**
 * Agents without a browser, and a local service under each of its addresses, with the MCP SDK's own client
 * over a real socket: an API key as the bearer token of /mcp (its scopes decide each tool call; a revoked,
 * expired or unknown key is a 401 with the challenge; one company never sees another's data), and OAuth on
 * `localhost` and on `127.0.0.1` alike when BILLING_PUBLIC_URL is a loopback URL: the metadata names the
 * host the client used, and a token issued through either host works on both. With a public https URL only
 * that URL is the resource. The same on the service started as a process: test/system/mcp-process.test.ts.
 *
 * The apps are built here rather than by the harness: the SDK client compares the resource with the URL it
 * connected to, so BILLING_PUBLIC_URL must carry the port the app really listens on.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { createApp, type App } from "../../src/app.js";
import { fixedClock } from "../../src/domain/kernel/clock.js";
import {
  describeEachEngine,
  createMigratedTestDatabase,
  postgresSkip,
  testConfig,
  type TestDatabase,
} from "../support/harness.js";
import {
  closing,
  connectWithBearer,
  connectWithOAuth,
  listedContracts,
  mcpRequest,
  seedContract,
  SignInOAuthProvider,
} from "../support/mcp-client.js";
import { closedPort } from "../support/webhook-receiver.js";

const HOUR = 60 * 60_000;

interface ToolAnswer {
  isError?: boolean;
  structuredContent?: Record<string, unknown>;
}

/** A tool call that must fail as a tool error with `code`; its error sentence. */
async function toolRefusal(client: Client, name: string, args: Record<string, unknown>, code: string): Promise<string> {
  const result = (await client.callTool({ name, arguments: args })) as ToolAnswer;
  assert.equal(result.isError, true, `${name} should fail: ${JSON.stringify(result)}`);
  assert.equal(result.structuredContent?.code, code, JSON.stringify(result.structuredContent));
  return String(result.structuredContent?.error);
}

/** POST /mcp tools/list with `credential`, by fetch: the raw answer. */
function rawToolsList(mcpUrl: URL, credential: string): Promise<Response> {
  return fetch(mcpUrl, {
    method: "POST",
    headers: {
      authorization: `Bearer ${credential}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list", params: {} }),
  });
}

/** A 401 with the bearer challenge that leads to the metadata on `mcpUrl`'s host. */
async function expectChallenge(res: Response, mcpUrl: URL): Promise<void> {
  assert.equal(res.status, 401, await res.clone().text());
  const challenge = res.headers.get("www-authenticate") ?? "";
  assert.match(challenge, /^Bearer error="invalid_token"/);
  assert.ok(challenge.includes(`resource_metadata="${mcpUrl.origin}/.well-known/oauth-protected-resource"`), challenge);
  assert.equal(((await res.json()) as { error: string }).error, "invalid_token");
}

for (const engine of ["pglite", "postgres"] as const) {
  const skip = postgresSkip(engine);

  describe(`MCP with an API key, and OAuth on localhost and 127.0.0.1 [${engine}]`, { skip }, () => {
    let database: TestDatabase;
    let app: App;
    let port: number;
    const clock = fixedClock(new Date("2026-03-15T12:00:00.000Z"));
    const user = {
      email: `agent-${randomBytes(4).toString("hex")}@example.com`,
      password: "correct horse battery staple",
    };
    let company: { id: string; key: string; contractId: string };
    // The two addresses of the one service: BILLING_PUBLIC_URL's, and the one it logs when it listens.
    const onLocalhost = () => new URL(`http://localhost:${port}/mcp`);
    const on127 = () => new URL(`http://127.0.0.1:${port}/mcp`);
    const bothHosts = () => [onLocalhost(), on127()];

    before(async () => {
      database = await createMigratedTestDatabase(engine);
      port = await closedPort();
      app = await createApp(testConfig({ BILLING_PUBLIC_URL: `http://localhost:${port}` }), { db: database.db, clock });
      await app.http.listen({ port, host: "127.0.0.1" });
      const created = await app.services.access.createCompany("Agent Co");
      await app.services.access.createUser(created.id, user.email, user.password);
      const { key } = await app.services.access.createApiKey(created.id, {});
      company = { id: created.id, key, contractId: await seedContract(`http://127.0.0.1:${port}`, key, "Acme Corp") };
    });

    after(async () => {
      await app?.close();
      await database?.drop();
    });

    it("an API key lists and calls the tools on localhost and on 127.0.0.1", async () => {
      for (const url of bothHosts()) {
        await closing(await connectWithBearer(url, company.key), async (client) => {
          const { tools } = await client.listTools();
          for (const name of [
            "list_contracts",
            "get_contract",
            "submit_usage",
            "finalize_invoice",
            "create_customer",
          ]) {
            assert.ok(
              tools.some((tool) => tool.name === name),
              `${url.host}: ${name} is listed`,
            );
          }
          assert.deepEqual(await listedContracts(client), [company.contractId], url.host);
          const got = (await client.callTool({
            name: "get_contract",
            arguments: { contract_id: company.contractId },
          })) as ToolAnswer;
          assert.equal((got.structuredContent as { id: string }).id, company.contractId);
          const customer = (await client.callTool({
            name: "create_customer",
            arguments: { name: `Made on ${url.hostname}` },
          })) as ToolAnswer;
          assert.notEqual(customer.isError, true, JSON.stringify(customer));
        });
      }
    });

    it("serves each loopback host its own metadata and challenge; any other Host header gets BILLING_PUBLIC_URL's", async () => {
      for (const url of bothHosts()) {
        for (const path of ["/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp"]) {
          const res = await fetch(new URL(path, url));
          assert.equal(res.status, 200);
          const metadata = (await res.json()) as { resource: string; authorization_servers: string[] };
          assert.equal(metadata.resource, url.href, `${url.host}${path}`);
          assert.deepEqual(metadata.authorization_servers, [`${url.origin}/`]);
        }
        const server = (await (await fetch(new URL("/.well-known/oauth-authorization-server", url))).json()) as Record<
          string,
          string
        >;
        assert.equal(server.issuer, `${url.origin}/`);
        assert.equal(server.authorization_endpoint, `${url.origin}/authorize`);
        assert.equal(server.token_endpoint, `${url.origin}/token`);
        assert.equal(server.registration_endpoint, `${url.origin}/register`);
        await expectChallenge(await rawToolsList(url, "mcp_at_unknown"), url);
      }
      for (const host of ["billing.example.com", `localhost:${port + 1}`, "127.0.0.2"]) {
        const res = await app.http.inject({
          method: "GET",
          url: "/.well-known/oauth-protected-resource",
          headers: { host },
        });
        assert.equal((res.json() as { resource: string }).resource, onLocalhost().href, host);
      }
    });

    it("completes OAuth on localhost and on 127.0.0.1; a token from either host works on both, and refreshes", async () => {
      const issued: { host: string; provider: SignInOAuthProvider }[] = [];
      for (const url of bothHosts()) {
        const provider = new SignInOAuthProvider(user);
        await closing(await connectWithOAuth(url, provider), async (client) => {
          assert.equal(
            provider.authorizationUrl!.origin,
            url.origin,
            "the authorization server is on the host the client used",
          );
          assert.equal(provider.authorizationUrl!.searchParams.get("resource"), url.href);
          const { tools } = await client.listTools();
          assert.ok(tools.some((tool) => tool.name === "list_contracts"));
          assert.deepEqual(await listedContracts(client), [company.contractId], url.host);
        });
        issued.push({ host: url.host, provider });
      }
      const { rows } = await app.db.query<{ resource: string }>("SELECT DISTINCT resource FROM oauth_tokens");
      assert.deepEqual(
        rows.map((row) => row.resource),
        [onLocalhost().href],
        "both grants are bound to BILLING_PUBLIC_URL's resource",
      );
      for (const { host, provider } of issued) {
        for (const url of bothHosts()) {
          await closing(await connectWithBearer(url, provider.tokens()!.access_token), async (client) => {
            assert.deepEqual(
              await listedContracts(client),
              [company.contractId],
              `a token issued on ${host}, used on ${url.host}`,
            );
          });
        }
      }

      // An hour on, the SDK refreshes on its own, with the resource of the host it uses (127.0.0.1 here).
      const { provider } = issued[1]!;
      const before = provider.tokens()!;
      clock.advance(HOUR + 60_000);
      await closing(new Client({ name: "oauth agent", version: "1.0.0" }), async (client) => {
        await client.connect(new StreamableHTTPClientTransport(on127(), { authProvider: provider }));
        assert.deepEqual(await listedContracts(client), [company.contractId]);
      });
      assert.notEqual(provider.tokens()!.access_token, before.access_token, "the 401 made the SDK refresh");
      assert.notEqual(provider.tokens()!.refresh_token, before.refresh_token, "and the refresh token rotated");
    });

    it("a key without a scope gets a tool error naming it, and is offered the same tools as a full key", async () => {
      const { key: readContracts } = await app.services.access.createApiKey(company.id, { scopes: ["contracts:read"] });
      const full = await closing(await connectWithBearer(on127(), company.key), async (client) =>
        (await client.listTools()).tools.map((tool) => tool.name),
      );
      await closing(await connectWithBearer(on127(), readContracts), async (client) => {
        assert.deepEqual(
          (await client.listTools()).tools.map((tool) => tool.name),
          full,
          "tools/list is the full list for every key",
        );
        assert.deepEqual(
          await listedContracts(client),
          [company.contractId],
          "contracts:read is enough for list_contracts",
        );
        assert.match(await toolRefusal(client, "list_invoices", {}, "insufficient_scope"), /invoices:read/);
        assert.match(
          await toolRefusal(client, "get_invoice", { number: "INV-1" }, "insufficient_scope"),
          /invoices:read/,
        );
        assert.match(
          await toolRefusal(client, "create_customer", { name: "Nope" }, "insufficient_scope"),
          /customers:write/,
        );
        assert.match(
          await toolRefusal(client, "create_sample_contract", { customer_id: "cus_x" }, "insufficient_scope"),
          /contracts:write/,
        );
      });
      assert.deepEqual(
        await closing(await connectWithBearer(on127(), company.key), listedContracts),
        [company.contractId],
        "the refused create_sample_contract made nothing",
      );
    });

    it("a revoked, expired or unknown key gets 401 with the challenge of the host used", async () => {
      const revoked = await app.services.access.createApiKey(company.id, {});
      const expiring = await app.services.access.createApiKey(company.id, {
        expiresAt: new Date(clock.now().getTime() + 60_000),
      });
      for (const { key } of [revoked, expiring]) {
        await closing(await connectWithBearer(on127(), key), async (client) =>
          assert.deepEqual(await listedContracts(client), [company.contractId]),
        );
      }
      await app.services.access.revokeApiKey(revoked.id);
      clock.advance(61_000);
      for (const key of [revoked.key, expiring.key, `sk_live_${randomBytes(32).toString("base64url")}`]) {
        for (const url of bothHosts()) {
          await expectChallenge(await rawToolsList(url, key), url);
          await assert.rejects(
            connectWithBearer(url, key),
            (error: unknown) => error instanceof StreamableHTTPError && error.code === 401,
          );
        }
      }
    });

    it("another company's key sees only that company's data", async () => {
      const other = await app.services.access.createCompany("Other Co");
      const { key } = await app.services.access.createApiKey(other.id, {});
      const otherContract = await seedContract(`http://127.0.0.1:${port}`, key, "Other's customer");
      await closing(await connectWithBearer(onLocalhost(), key), async (client) => {
        assert.deepEqual(await listedContracts(client), [otherContract]);
        await toolRefusal(client, "get_contract", { contract_id: company.contractId }, "not_found");
        const customers = (await client.callTool({ name: "list_customers", arguments: {} })) as ToolAnswer;
        assert.deepEqual(
          (customers.structuredContent as { data: { name: string }[] }).data.map((customer) => customer.name),
          ["Other's customer"],
        );
      });
      await closing(await connectWithBearer(onLocalhost(), company.key), async (client) => {
        assert.deepEqual(await listedContracts(client), [company.contractId]);
        await toolRefusal(client, "get_contract", { contract_id: otherContract }, "not_found");
      });
    });
  });

  describe(`MCP on a public https URL: 127.0.0.1 is not the resource [${engine}]`, { skip }, () => {
    const publicUrl = "https://billing.example.com";
    let database: TestDatabase;
    let app: App;
    let port: number;
    const user = {
      email: `public-${randomBytes(4).toString("hex")}@example.com`,
      password: "correct horse battery staple",
    };
    let key: string;
    /** The network as seen from a client for which billing.example.com is this process (a proxy in production). */
    const viaPublicHost: typeof fetch = (input, init) => {
      const url = new URL(input instanceof Request ? input.url : String(input));
      if (url.origin !== publicUrl) return fetch(input, init);
      return fetch(
        `http://127.0.0.1:${port}${url.pathname}${url.search}`,
        input instanceof Request ? new Request(input, init) : init,
      );
    };

    before(async () => {
      database = await createMigratedTestDatabase(engine);
      port = await closedPort();
      app = await createApp(testConfig({ BILLING_PUBLIC_URL: publicUrl }), {
        db: database.db,
        clock: fixedClock(new Date("2026-03-15T12:00:00.000Z")),
      });
      await app.http.listen({ port, host: "127.0.0.1" });
      const company = await app.services.access.createCompany("Public Co");
      await app.services.access.createUser(company.id, user.email, user.password);
      key = (await app.services.access.createApiKey(company.id, {})).key;
    });

    after(async () => {
      await app?.close();
      await database?.drop();
    });

    it("names only BILLING_PUBLIC_URL, refuses a 127.0.0.1 resource, and the SDK client on 127.0.0.1 cannot complete OAuth", async () => {
      const local = new URL(`http://127.0.0.1:${port}/mcp`);
      const metadata = (await (await fetch(new URL("/.well-known/oauth-protected-resource", local))).json()) as {
        resource: string;
        authorization_servers: string[];
      };
      assert.equal(metadata.resource, `${publicUrl}/mcp`);
      assert.deepEqual(metadata.authorization_servers, [`${publicUrl}/`]);
      assert.equal(
        ((await (await fetch(new URL("/.well-known/oauth-authorization-server", local))).json()) as { issuer: string })
          .issuer,
        `${publicUrl}/`,
      );
      const challenge = (await rawToolsList(local, "mcp_at_unknown")).headers.get("www-authenticate") ?? "";
      assert.ok(challenge.includes(`resource_metadata="${publicUrl}/.well-known/oauth-protected-resource"`), challenge);

      // The SDK's own check: the resource the metadata names is not the URL it connected to.
      const provider = new SignInOAuthProvider(user, viaPublicHost);
      await assert.rejects(
        new Client({ name: "oauth agent", version: "1.0.0" }).connect(
          new StreamableHTTPClientTransport(local, { authProvider: provider, fetch: viaPublicHost }),
        ),
        /Protected resource https:\/\/billing\.example\.com\/mcp does not match/,
      );
      assert.equal(provider.authorizationUrl, undefined, "it never got as far as signing in");

      // A client that asks for a 127.0.0.1 resource anyway is refused by the authorization server.
      const registered = await fetch(new URL("/register", local), {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({
          redirect_uris: ["http://127.0.0.1:48123/callback"],
          token_endpoint_auth_method: "none",
        }),
      });
      assert.equal(registered.status, 201);
      const { client_id } = (await registered.json()) as { client_id: string };
      const query = new URLSearchParams({
        response_type: "code",
        client_id,
        redirect_uri: "http://127.0.0.1:48123/callback",
        code_challenge: "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM",
        code_challenge_method: "S256",
        resource: local.href,
        state: "s",
      });
      const refused = await fetch(new URL(`/authorize?${query}`, local), { redirect: "manual" });
      assert.equal(refused.status, 302);
      assert.equal(new URL(refused.headers.get("location")!).searchParams.get("error"), "invalid_target");

      // Through the public URL the same client completes the flow; an API key is bound to no host.
      await closing(
        await connectWithOAuth(
          new URL(`${publicUrl}/mcp`),
          new SignInOAuthProvider(user, viaPublicHost),
          viaPublicHost,
        ),
        async (client) => {
          assert.ok((await client.listTools()).tools.length > 0);
        },
      );
      await closing(await connectWithBearer(local, key), async (client) =>
        assert.deepEqual(await listedContracts(client), []),
      );
    });
  });
}

describe("MCP with BILLING_PUBLIC_URL on [::1]", () => {
  let database: TestDatabase;
  let app: App;
  let port: number;
  const user = { email: `v6-${randomBytes(4).toString("hex")}@example.com`, password: "correct horse battery staple" };

  before(async () => {
    database = await createMigratedTestDatabase("pglite");
    port = await closedPort();
    app = await createApp(testConfig({ BILLING_PUBLIC_URL: `http://[::1]:${port}` }), {
      db: database.db,
      clock: fixedClock(new Date("2026-03-15T12:00:00.000Z")),
    });
    await app.http.listen({ port, host: "127.0.0.1" });
    const company = await app.services.access.createCompany("V6 Co");
    await app.services.access.createUser(company.id, user.email, user.password);
  });

  after(async () => {
    await app?.close();
    await database?.drop();
  });

  it("is served (the loopback address the SDK's issuer check does not know) and a client on 127.0.0.1 completes OAuth", async () => {
    const asked = await app.http.inject({
      method: "GET",
      url: "/.well-known/oauth-authorization-server",
      headers: { host: `[::1]:${port}` },
    });
    assert.equal(asked.statusCode, 200, asked.body);
    assert.equal((asked.json() as { issuer: string }).issuer, `http://[::1]:${port}/`);
    assert.equal((asked.json() as { token_endpoint: string }).token_endpoint, `http://[::1]:${port}/token`);
    const provider = new SignInOAuthProvider(user);
    await closing(await connectWithOAuth(new URL(`http://127.0.0.1:${port}/mcp`), provider), async (client) => {
      assert.deepEqual(await listedContracts(client), []);
    });
    const { rows } = await app.db.query<{ resource: string }>("SELECT DISTINCT resource FROM oauth_tokens");
    assert.deepEqual(
      rows.map((row) => row.resource),
      [`http://[::1]:${port}/mcp`],
      "the grant is bound to BILLING_PUBLIC_URL's resource",
    );
  });
});

describeEachEngine(
  "MCP: wrong API keys spend the address's failed-authentication budget",
  (t) => {
    it("answers 429 with Retry-After once the budget is spent, still serves a valid key, and does not count OAuth tokens", async () => {
      const { key } = await t().newCompany();
      for (let attempt = 0; attempt < 3; attempt++) {
        assert.equal((await mcpRequest(t(), `sk_live_wrong-${attempt}`, "tools/list")).statusCode, 401);
      }
      const throttled = await mcpRequest(t(), "sk_live_wrong-again", "tools/list");
      assert.equal(throttled.statusCode, 429, throttled.body);
      assert.ok(Number(throttled.headers["retry-after"]) >= 1);
      assert.equal((throttled.json() as { error: string }).error, "too_many_failed_attempts");
      assert.equal(
        (await mcpRequest(t(), key, "tools/list")).statusCode,
        200,
        "a valid key is never refused by the throttle",
      );
      const oauth = await mcpRequest(t(), "mcp_at_expired-or-unknown", "tools/list");
      assert.equal(oauth.statusCode, 401, "an OAuth token is answered as before");
    });
  },
  { env: { BILLING_AUTH_FAILURES: "3" } },
);

describeEachEngine(
  "MCP: an API key's request budget is the API's",
  (t) => {
    it("answers 429 with Retry-After once the key spent its requests on the API, and keeps other keys' budgets apart", async () => {
      const { key, companyId } = await t().newCompany();
      for (let i = 0; i < 3; i++)
        assert.equal((await t().call({ method: "GET", url: "/v1/billing/customers", key })).statusCode, 200);
      const refused = await mcpRequest(t(), key, "tools/list");
      assert.equal(refused.statusCode, 429, refused.body);
      assert.ok(Number(refused.headers["retry-after"]) >= 1);
      assert.equal((refused.json() as { error: string }).error, "rate_limited");
      const other = (await t().app.services.access.createApiKey(companyId, {})).key;
      assert.equal((await mcpRequest(t(), other, "tools/list")).statusCode, 200, "another key has its own budget");
    });
  },
  { env: { BILLING_RATE_LIMIT: "3/m" } },
);
