/**
 * End to end with the MCP SDK's own client over a real socket: discovery (the 401 challenge, RFC 9728,
 * RFC 8414), dynamic registration, authorization code + PKCE through the login and consent pages, the
 * token exchange, tools/list, a tool call that returns the company's contract, and refresh-token rotation.
 *
 * The app is built here rather than by the harness: the SDK client insists that the issuer, the resource
 * and the URL it talks to agree, so BILLING_PUBLIC_URL must carry the port the app really listens on.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { after, before, describe, it } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import {
  UnauthorizedError,
  discoverAuthorizationServerMetadata,
  refreshAuthorization,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { InvalidGrantError } from "@modelcontextprotocol/sdk/server/auth/errors.js";
import { createApp, type App } from "../../src/app.js";
import { fixedClock } from "../../src/domain/kernel/clock.js";
import { createMigratedTestDatabase, postgresSkip, testConfig, type TestDatabase } from "../support/harness.js";
import { SignInOAuthProvider } from "../support/mcp-client.js";

const HOUR = 60 * 60_000;

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve, reject) => server.close((error) => (error ? reject(error) : resolve())));
  return port;
}

for (const engine of ["pglite", "postgres"] as const) {
  const skip = postgresSkip(engine);

  describe(`MCP end to end with the SDK client [${engine}]`, { skip }, () => {
    let database: TestDatabase;
    let app: App;
    let base: string;
    const clock = fixedClock(new Date("2026-03-15T12:00:00.000Z"));
    const user = {
      email: `e2e-${randomBytes(4).toString("hex")}@example.com`,
      password: "correct horse battery staple",
    };
    let contractId: string;

    before(async () => {
      database = await createMigratedTestDatabase(engine);
      const port = await freePort();
      base = `http://127.0.0.1:${port}`;
      app = await createApp(testConfig({ BILLING_PUBLIC_URL: base }), { db: database.db, clock });
      await app.http.listen({ port, host: "127.0.0.1" });

      // The company, its dashboard user, and a customer with a sample contract made through the API.
      const company = await app.services.access.createCompany("E2E Co");
      await app.services.access.createUser(company.id, user.email, user.password);
      const { key } = await app.services.access.createApiKey(company.id, {});
      const headers = { authorization: `Bearer ${key}`, "content-type": "application/json" };
      const customer = await fetch(`${base}/v1/billing/customers`, {
        method: "POST",
        headers,
        body: JSON.stringify({ name: "Acme Corp" }),
      });
      assert.equal(customer.status, 201);
      const contract = await fetch(`${base}/v1/billing/contracts`, {
        method: "POST",
        headers,
        body: JSON.stringify({ customer_id: ((await customer.json()) as { id: string }).id }),
      });
      assert.equal(contract.status, 201);
      contractId = ((await contract.json()) as { id: string }).id;
    });

    after(async () => {
      await app?.close();
      await database?.drop();
    });

    it("discovers, registers, authorizes with PKCE, lists tools, reads contracts and rotates the refresh token", async () => {
      const mcpUrl = new URL("/mcp", base);
      const provider = new SignInOAuthProvider(user);

      // 1. No token yet: the 401 challenge leads the SDK through discovery, registration and the authorize step.
      const first = new Client({ name: "e2e", version: "1.0.0" });
      await assert.rejects(
        first.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider })),
        UnauthorizedError,
      );
      const clientInfo = provider.clientInformation();
      assert.ok(clientInfo?.client_id, "the client registered itself");
      assert.equal((clientInfo as { client_secret?: string }).client_secret, undefined, "a public client");
      const authorizationUrl = provider.authorizationUrl!;
      assert.equal(authorizationUrl.searchParams.get("code_challenge_method"), "S256");
      assert.ok(authorizationUrl.searchParams.get("code_challenge"));
      assert.equal(authorizationUrl.searchParams.get("resource"), mcpUrl.href);
      assert.ok(provider.code);

      // 2. The code for tokens, then a new connection with them.
      const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
      await transport.finishAuth(provider.code);
      const tokens = provider.tokens()!;
      assert.ok(tokens.access_token && tokens.refresh_token);
      assert.deepEqual(tokens.scope?.split(" ").sort(), ["read:invoices", "write:invoices"]);

      const client = new Client({ name: "e2e", version: "1.0.0" });
      await client.connect(transport);
      try {
        const { tools } = await client.listTools();
        assert.ok(tools.some((tool) => tool.name === "list_contracts"));
        assert.ok(tools.some((tool) => tool.name === "submit_usage"));

        const result = await client.callTool({ name: "list_contracts", arguments: {} });
        assert.notEqual(result.isError, true, JSON.stringify(result));
        const listed = result.structuredContent as { object: string; data: { id: string; customer_name: string }[] };
        assert.equal(listed.object, "list");
        assert.deepEqual(
          listed.data.map((c) => [c.id, c.customer_name]),
          [[contractId, "Acme Corp"]],
        );
      } finally {
        await client.close();
      }

      // 3. A refresh, with the SDK's own function: new tokens that work; the old refresh token is now refused.
      const metadata = await discoverAuthorizationServerMetadata(new URL("/", base));
      assert.ok(metadata);
      const refreshed = await refreshAuthorization(new URL("/", base), {
        metadata,
        clientInformation: clientInfo,
        refreshToken: tokens.refresh_token!,
        resource: mcpUrl,
      });
      assert.notEqual(refreshed.access_token, tokens.access_token);
      assert.notEqual(refreshed.refresh_token, tokens.refresh_token);
      provider.saveTokens(refreshed);

      const again = new Client({ name: "e2e", version: "1.0.0" });
      await again.connect(new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }));
      try {
        const result = await again.callTool({ name: "get_contract", arguments: { contract_id: contractId } });
        assert.equal((result.structuredContent as { id: string }).id, contractId);
      } finally {
        await again.close();
      }
      assert.equal(provider.tokens()!.access_token, refreshed.access_token, "the refreshed access token did the work");

      await assert.rejects(
        refreshAuthorization(new URL("/", base), {
          metadata,
          clientInformation: clientInfo,
          refreshToken: tokens.refresh_token!,
          resource: mcpUrl,
        }),
        (error: unknown) => error instanceof InvalidGrantError,
      );
    });

    it("refreshes on its own when the access token has expired", async () => {
      const mcpUrl = new URL("/mcp", base);
      const provider = new SignInOAuthProvider(user);
      await assert.rejects(
        new Client({ name: "e2e", version: "1.0.0" }).connect(
          new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider }),
        ),
        UnauthorizedError,
      );
      const transport = new StreamableHTTPClientTransport(mcpUrl, { authProvider: provider });
      await transport.finishAuth(provider.code!);
      const client = new Client({ name: "e2e", version: "1.0.0" });
      await client.connect(transport);
      try {
        const before = provider.tokens()!;
        clock.advance(HOUR + 60_000);
        const result = await client.callTool({ name: "list_contracts", arguments: {} });
        assert.notEqual(result.isError, true, JSON.stringify(result));
        const after = provider.tokens()!;
        assert.notEqual(after.access_token, before.access_token, "the 401 made the SDK refresh");
        assert.notEqual(after.refresh_token, before.refresh_token, "and the refresh token rotated");
      } finally {
        await client.close();
      }
    });
  });
}
