/**
 * One validation for every surface: what the HTTP API refuses, the MCP tools refuse too, with the same
 * code, and nothing is stored. Before, the tools let text through that the API refuses: an unpaired
 * surrogate became U+FFFD on its way into PostgreSQL, so "x\ud800" and "x\udbff" were one event id (the
 * second answered "accepted, duplicate" and was never billed) and one customer external_id (a false 409).
 */
import assert from "node:assert/strict";
import { before, it } from "node:test";
import { describeEachEngine } from "../support/harness.js";
import { USAGE, createCustomer, createSampleContract, usageEvent } from "../support/api.js";
import { expectError } from "../support/assertions.js";
import {
  assertSentence,
  callTool,
  mcpRequest,
  newUser,
  obtainTokens,
  type ToolResult,
  type User,
} from "../support/mcp-client.js";
import { storedState } from "../support/fuzz-generators.js";

describeEachEngine("MCP tools validate as the API does", (t) => {
  let user: User;
  let token: string;
  let contractId: string;
  before(async () => {
    user = await newUser(t());
    token = (await obtainTokens(t(), user)).access_token;
    contractId = (
      await createSampleContract(t(), user.key, (await createCustomer(t(), user.key, { name: "Parity customer" })).id)
    ).id;
  });

  const long = "n".repeat(201);
  const cases: Array<{
    what: string;
    api: { method: "POST" | "GET"; url: () => string; payload?: () => unknown };
    tool: string;
    args: () => Record<string, unknown>;
  }> = [
    {
      what: "an unpaired high surrogate in a customer name",
      api: { method: "POST", url: () => "/v1/billing/customers", payload: () => ({ name: "x\ud800" }) },
      tool: "create_customer",
      args: () => ({ name: "x\ud800" }),
    },
    {
      what: "an unpaired low surrogate in an external_id",
      api: {
        method: "POST",
        url: () => "/v1/billing/customers",
        payload: () => ({ name: "A", external_id: "x\udbff" }),
      },
      tool: "create_customer",
      args: () => ({ name: "A", external_id: "x\udbff" }),
    },
    {
      what: "a NUL in a customer name",
      api: { method: "POST", url: () => "/v1/billing/customers", payload: () => ({ name: "a\u0000b" }) },
      tool: "create_customer",
      args: () => ({ name: "a\u0000b" }),
    },
    {
      what: "a customer name over 200 characters",
      api: { method: "POST", url: () => "/v1/billing/customers", payload: () => ({ name: long }) },
      tool: "create_customer",
      args: () => ({ name: long }),
    },
    {
      what: "an unpaired surrogate in an event id",
      api: {
        method: "POST",
        url: () => USAGE,
        payload: () => ({ events: [usageEvent(contractId, { event_id: "x\ud800" })] }),
      },
      tool: "submit_usage",
      args: () => ({ events: [usageEvent(contractId, { event_id: "x\ud800" })] }),
    },
    {
      what: "a NUL in a metric",
      api: {
        method: "POST",
        url: () => USAGE,
        payload: () => ({ events: [usageEvent(contractId, { metric: "domestic\u0000wire" })] }),
      },
      tool: "submit_usage",
      args: () => ({ events: [usageEvent(contractId, { metric: "domestic\u0000wire" })] }),
    },
    {
      what: "an unpaired surrogate in a pricing rule's name",
      api: {
        method: "POST",
        url: () => `/v1/billing/contracts/${contractId}/pricing-rules`,
        payload: () => ({ metric: "m", rate: 0.1, name: "r\udc00" }),
      },
      tool: "add_pricing_rule",
      args: () => ({ contract_id: contractId, rule: { metric: "m", rate: 0.1, name: "r\udc00" } }),
    },
    {
      what: "a contract id over 255 characters",
      api: { method: "GET", url: () => `/v1/billing/contracts/${"c".repeat(256)}` },
      tool: "get_contract",
      args: () => ({ contract_id: "c".repeat(256) }),
    },
  ];

  for (const c of cases) {
    it(`refuses ${c.what} on both surfaces with the same code, storing nothing`, async () => {
      const stateBefore = await storedState(t(), user.companyId);
      const res = await t().call({
        method: c.api.method,
        url: c.api.url(),
        key: user.key,
        ...(c.api.payload ? { payload: c.api.payload() as object } : {}),
      });
      const apiCode = res.statusCode === 404 ? "not_found" : expectError(res, 400).code;
      const called = await mcpRequest(t(), token, "tools/call", { name: c.tool, arguments: c.args() });
      const answer = called.json() as { result?: ToolResult; error?: { code: number; message: string } };
      if (answer.error) {
        // Refused by the tool's schema (the API's own): JSON-RPC Invalid params, where the API answers
        // invalid_request (or a 404 for an id no company can have: its path router).
        assert.ok(["invalid_request", "not_found"].includes(apiCode), `${apiCode}: ${called.body}`);
        assert.equal(answer.error.code, -32602, called.body);
        assertSentence(answer.error.message);
      } else {
        assert.equal(answer.result?.isError, true, `${c.tool}: ${called.body}`);
        assert.equal(answer.result?.structuredContent?.code, apiCode, called.body);
      }
      assert.equal(await storedState(t(), user.companyId), stateBefore, "nothing stored");
    });
  }

  it("keeps two event ids that differ only in an unpaired surrogate from becoming one stored event", async () => {
    for (const id of ["dup\ud800", "dup\udbff"]) {
      const result = await callTool(t(), token, "submit_usage", { events: [usageEvent(contractId, { event_id: id })] });
      assert.equal(result.isError, true);
      assert.equal(result.structuredContent?.code, "invalid_request");
    }
    const { rows } = await t().app.db.query("SELECT id FROM usage_events WHERE company_id = $1 AND id LIKE 'dup%'", [
      user.companyId,
    ]);
    assert.deepEqual(rows, []);
  });

  it("reads back an event whose id has the longest length the API takes (255), on both surfaces", async () => {
    // Fastify's router refused path parameters over 100 characters with 414 before the route's schema ran.
    const id = `e${"x".repeat(254)}`;
    const res = await t().call({
      method: "POST",
      url: USAGE,
      key: user.key,
      payload: { events: [usageEvent(contractId, { event_id: id })] },
    });
    assert.equal(res.statusCode, 200, res.body);
    const got = await t().call({ method: "GET", url: `${USAGE}/${id}`, key: user.key });
    assert.equal(got.statusCode, 200, got.body);
    const result = await callTool(t(), token, "get_usage_event", { event_id: id });
    assert.notEqual(result.isError, true, JSON.stringify(result));
  });
});
