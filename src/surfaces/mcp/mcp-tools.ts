// The MCP server (docs/mcp.md, "Tools"): how a tool call is checked and answered. A malformed call, an unknown
// tool or refused arguments are JSON-RPC errors; a domain refusal is a tool error in the API's shape; a fault of
// ours is an internal error that says nothing of itself. Which tools there are, and the one service call each
// makes, is mcp-tool-catalogue.ts.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";
import { DomainError } from "../../domain/kernel/errors.js";
import { unstorableTextError } from "../../domain/kernel/storable-text.js";
import type { Tenancy } from "../../domain/kernel/tenancy.js";
import type { OAuthScope } from "../../domain/oauth/oauth-protocol.js";
import type { Services } from "../../domain/services.js";
import { toHttpError } from "../http/error-handler.js";
import { stringifyJson } from "../../platform/exact-json.js";
import type { Logger } from "../../platform/logger.js";
import { argumentsProblem, toolCallProblem } from "./mcp-argument-problems.js";
import { INVALID_PARAMS, internalRpcError, RpcError } from "./mcp-errors.js";
import { defineTools } from "./mcp-tool-catalogue.js";

const ok = (value: object): CallToolResult => ({
  content: [{ type: "text", text: stringifyJson(value) }],
  structuredContent: value as Record<string, unknown>,
});

/** A refusal by the domain (not found, conflict, a scope, text it cannot store) is a tool error in the API's `{ error, code }`. */
const failure = (body: { error: string; code: string; [k: string]: unknown }): CallToolResult => ({
  content: [{ type: "text", text: stringifyJson(body) }],
  structuredContent: body,
  isError: true,
});

/** Who calls the tools: an OAuth token's grant, or an API key. */
export interface McpCaller {
  /** The company the tools act for, with its API scopes (an OAuth token's stand for its OAuth scopes). */
  actor: Tenancy;
  /**
   * An OAuth token's scopes (`read:invoices`, `write:invoices`), checked before a tool runs so that its
   * refusal names the scope the token lacks. Null for an API key: the domain services check its own API
   * scopes (`invoices:read`, …), and their refusal names the one it lacks.
   */
  oauthScopes: readonly string[] | null;
}

/**
 * The MCP server for one request (stateless: any process answers any request). Every tool parses its
 * arguments, calls one service function as the caller's company, and presents: no rule lives here.
 * Every caller is offered every tool (docs/mcp.md, "API keys"): what it may do is decided per call.
 */
export function buildMcpServer(
  services: Services,
  caller: McpCaller,
  links: { publicUrl: string; logger: Logger },
): McpServer {
  const server = new McpServer({ name: "usage-billing", version: "1.0.0" }, { capabilities: { tools: {} } });
  const { actor, oauthScopes } = caller;
  const tools = new Map<string, { schema: z.ZodObject; call: (args: never) => Promise<CallToolResult> }>();

  function tool<Shape extends z.ZodRawShape>(
    name: string,
    scope: OAuthScope,
    description: string,
    inputSchema: Shape,
    run: (args: z.infer<z.ZodObject<Shape>>) => Promise<object>,
  ) {
    // Strict, like the API's bodies: an unknown (or misspelt) argument is refused, not silently dropped.
    const schema = z.strictObject(inputSchema);
    const call = async (args: z.infer<z.ZodObject<Shape>>): Promise<CallToolResult> => {
      if (oauthScopes && !oauthScopes.includes(scope)) {
        return failure({ error: `This token lacks the required scope: ${scope}`, code: "insufficient_scope" });
      }
      // The API refuses such text in every body before any route sees it (http-app.ts); so do the tools.
      const refusal = unstorableTextError(args);
      if (refusal) return failure(toHttpError(refusal).body);
      try {
        return ok(await run(args));
      } catch (error) {
        if (error instanceof DomainError) return failure(toHttpError(error).body);
        // Anything else is a fault of ours: logged whole, answered without a word of it (mcp-errors.ts).
        links.logger.error({ err: error, tool: name }, "mcp tool failed");
        throw internalRpcError();
      }
    };
    // Registered with the SDK for tools/list (its JSON Schema, annotations); calls go through `callTool` below.
    server.registerTool(
      name,
      {
        description: `${description} Needs scope ${scope}.`,
        inputSchema: schema,
        annotations: { readOnlyHint: scope === "read:invoices" },
      },
      call as never,
    );
    tools.set(name, { schema, call: call as (args: never) => Promise<CallToolResult> });
  }

  /**
   * tools/call, answered here rather than by the SDK's handler, which answers every failure (a refused
   * argument, our own fault with its message) as a tool result. Here: a malformed call, an unknown tool or
   * refused arguments are JSON-RPC Invalid params with one sentence; a domain refusal is a tool error in
   * the API's shape; anything else is an internal error that says nothing of itself (docs/mcp.md, "Tools").
   */
  async function callTool(params: {
    name: string;
    arguments?: Record<string, unknown> | undefined;
  }): Promise<CallToolResult> {
    const found = tools.get(params.name);
    if (!found)
      throw new RpcError(INVALID_PARAMS, `Unknown tool: ${params.name.slice(0, 100)}. tools/list names the tools`);
    const parsed = await found.schema.safeParseAsync(params.arguments ?? {});
    if (!parsed.success)
      throw new RpcError(INVALID_PARAMS, argumentsProblem(params.name, parsed.error.issues, params.arguments ?? {}));
    return found.call(parsed.data as never);
  }

  defineTools(tool, services, actor, links.publicUrl);

  // The request's params are checked by a transform that throws: a zod issue would be answered as the SDK's
  // internal error with the validator's output, a thrown RpcError is answered as it is.
  const callRequest = z.looseObject({
    method: z.literal("tools/call"),
    params: z.unknown().transform((params) => {
      const problem = toolCallProblem(params);
      if (problem !== undefined) throw new RpcError(INVALID_PARAMS, problem);
      return params as { name: string; arguments?: Record<string, unknown> };
    }),
  });
  server.server.setRequestHandler(callRequest, (request) => callTool(request.params));
  return server;
}
