/**
 * MCP on the service as operators start it, a child process with its defaults: an API key and OAuth on
 * `localhost` and on `127.0.0.1`, and neither keys nor tokens in its logs. The same on in-process apps, on
 * both engines: test/mcp/mcp-api-key.test.ts.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { describe, it } from "node:test";
import { StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import {
  closing,
  connectWithBearer,
  connectWithOAuth,
  listedContracts,
  seedContract,
  SignInOAuthProvider,
} from "../support/mcp-client.js";
import { serviceProcesses } from "../support/service-process.js";
import { closedPort } from "../support/webhook-receiver.js";

describe("MCP on the service as started: default BILLING_PUBLIC_URL (localhost), listening on 127.0.0.1", () => {
  const procs = serviceProcesses();

  it("serves an API key and OAuth on localhost and on 127.0.0.1, and logs neither keys nor tokens", {
    timeout: 120_000,
  }, async () => {
    const port = await closedPort();
    const apiKey = `sk_test_mcp_${randomBytes(16).toString("hex")}`;
    const user = {
      email: `owner-${randomBytes(3).toString("hex")}@example.com`,
      password: "correct horse battery staple",
    };
    const service = await procs.start(
      {
        BILLING_DATA_DIR: "memory://",
        BILLING_PUBLIC_URL: "", // the default: http://localhost:$PORT
        BILLING_BOOTSTRAP_COMPANY: "Process Co",
        BILLING_BOOTSTRAP_API_KEY: apiKey,
        BILLING_BOOTSTRAP_EMAIL: user.email,
        BILLING_BOOTSTRAP_PASSWORD: user.password,
        LOG_LEVEL: "debug",
      },
      { port },
    );
    assert.ok(service.output.join("").includes(`http://127.0.0.1:${port}`), "the service says where it listens");
    const contractId = await seedContract(service.base, apiKey, "Acme Corp");

    const secrets = [apiKey];
    for (const url of [new URL(`http://localhost:${port}/mcp`), new URL(`http://127.0.0.1:${port}/mcp`)]) {
      await closing(await connectWithBearer(url, apiKey), async (client) => {
        assert.ok((await client.listTools()).tools.some((tool) => tool.name === "get_contract"));
        assert.deepEqual(await listedContracts(client), [contractId], `API key on ${url.host}`);
      });
      const provider = new SignInOAuthProvider(user);
      await closing(await connectWithOAuth(url, provider), async (client) => {
        assert.deepEqual(await listedContracts(client), [contractId], `OAuth on ${url.host}`);
      });
      secrets.push(provider.tokens()!.access_token, provider.tokens()!.refresh_token!);
    }
    const wrongKey = `sk_live_${randomBytes(32).toString("base64url")}`;
    await assert.rejects(
      connectWithBearer(new URL(`http://localhost:${port}/mcp`), wrongKey),
      (error: unknown) => error instanceof StreamableHTTPError && error.code === 401,
    );
    secrets.push(wrongKey);

    const logs = service.output.join("");
    for (const secret of secrets) assert.ok(!logs.includes(secret), "no key or token in the logs");
  });
});
