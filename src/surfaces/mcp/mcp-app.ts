import express, { type Request, type Response } from "express";
import { rateLimit } from "express-rate-limit";
import { metadataHandler } from "@modelcontextprotocol/sdk/server/auth/handlers/metadata.js";
import { createOAuthMetadata, mcpAuthRouter } from "@modelcontextprotocol/sdk/server/auth/router.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { decodeUtf8 } from "../../domain/kernel/storable-text.js";
import { OAUTH_SCOPES } from "../../domain/oauth/oauth-protocol.js";
import type { Services } from "../../domain/services.js";
import type { FailureThrottle } from "../../platform/failure-throttle.js";
import { parseJsonExact, unmarkNumbers } from "../../platform/exact-json.js";
import type { Logger } from "../../platform/logger.js";
import { authenticateMcp, credentialOf } from "./mcp-credentials.js";
import { describeOAuthErrors, mcpErrorHandler, refuseUnstorableBodies, requireBodyType } from "./mcp-errors.js";
import { resourceOrigins } from "./mcp-origins.js";
import { buildMcpServer } from "./mcp-tools.js";
import { consentPage, errorPage, loginPage, PAGE_HEADERS } from "./oauth-pages.js";
import { clientName, createOAuthProvider } from "./oauth-provider.js";
import type { RateLimiter } from "../../platform/rate-limiter.js";

const RATE_LIMIT = { windowMs: 15 * 60_000, limit: 1000, validate: false } as const;

/**
 * The agent surface: the OAuth 2.1 authorization server (the SDK's router over our provider, plus our
 * login and consent pages) and the MCP endpoint, which takes an OAuth access token or an API key
 * (mcp-credentials.ts): an express app to which Fastify hands MCP_PATHS.
 */
export function createMcpApp({
  services,
  publicUrl,
  logger,
  authFailures,
  rateLimiter,
}: {
  services: Services;
  publicUrl: string;
  logger: Logger;
  /** Requests per credential, the API's own limiter (null: BILLING_RATE_LIMIT=off). */
  rateLimiter: RateLimiter | null;
  /** Wrong sign-in passwords per client address, shared with the other surfaces (null: BILLING_AUTH_FAILURES=off). */
  authFailures: FailureThrottle | null;
}) {
  const app = express();
  app.disable("x-powered-by");
  app.use((_req, res, next) => {
    res.setHeader("x-content-type-options", "nosniff");
    res.setHeader("referrer-policy", "no-referrer");
    next();
  });
  // Bodies of the wrong type are a 415, and no form or JSON body may hold text PostgreSQL cannot store
  // (storable-text.ts); both are checked before any handler, the SDK's included, sees the body.
  app.use("/register", requireBodyType("application/json"));
  app.use(
    ["/authorize", "/token", "/revoke", "/oauth/login", "/oauth/consent"],
    requireBodyType("application/x-www-form-urlencoded"),
  );
  app.use(["/register", "/authorize", "/token", "/revoke", "/oauth/login", "/oauth/consent"], refuseUnstorableBodies);
  // The SDK's handlers describe a refused request with their validator's output: a sentence instead.
  app.use(["/register", "/authorize", "/token", "/revoke"], describeOAuthErrors);
  const origins = resourceOrigins(publicUrl);
  const base = origins.canonical;
  const provider = createOAuthProvider(services.oauth, origins.canonicalResource);
  const resourceName = "Usage-based billing (MCP)";
  // The SDK's router takes its endpoints' paths from this URL and refuses an http one off localhost and
  // 127.0.0.1; [::1] is the same machine, so it is given the localhost spelling. Its own metadata documents
  // are never reached: the ones below answer first.
  const routerBase = base.hostname === "[::1]" ? new URL(base.href.replace("[::1]", "localhost")) : base;
  const authorizationServer = createOAuthMetadata({
    provider,
    issuerUrl: routerBase,
    baseUrl: routerBase,
    scopesSupported: [...OAUTH_SCOPES],
  });

  // The metadata documents (RFC 9728, RFC 8414) of each origin the resource answers as (mcp-origins.ts):
  // a request gets those of the host it was addressed to, and a client led by them finds a resource, an
  // issuer and endpoints on the origin it connected to.
  const metadataByOrigin = new Map(
    origins.all.map((origin) => {
      const rehost = (url: string) =>
        url.startsWith(routerBase.href) ? origin.href + url.slice(routerBase.href.length) : url;
      const asMetadata = Object.fromEntries(
        Object.entries(authorizationServer).map(([name, value]) => [
          name,
          typeof value === "string" ? rehost(value) : value,
        ]),
      );
      const protectedResource = {
        resource: new URL("/mcp", origin).href,
        authorization_servers: [origin.href],
        scopes_supported: [...OAUTH_SCOPES],
        bearer_methods_supported: ["header"],
        resource_name: resourceName,
      };
      const router = express.Router();
      // RFC 9728 at the host's root, where the spec puts it, and at …/oauth-protected-resource/mcp as the SDK does.
      router.get("/.well-known/oauth-protected-resource", (_req, res) => {
        res.setHeader("Cache-Control", "no-store");
        res.json(protectedResource);
      });
      router.all("/.well-known/oauth-protected-resource", (req, res) => {
        res
          .status(405)
          .set("Allow", "GET")
          .json({
            error: "method_not_allowed",
            error_description: `The method ${req.method} is not allowed for this endpoint`,
          });
      });
      router.use("/.well-known/oauth-protected-resource/mcp", metadataHandler(protectedResource));
      router.use("/.well-known/oauth-authorization-server", metadataHandler(asMetadata as typeof authorizationServer));
      return [origin.href, router] as const;
    }),
  );
  app.use((req, res, next) => metadataByOrigin.get(origins.of(req.headers.host).href)!(req, res, next));

  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: routerBase,
      baseUrl: routerBase,
      scopesSupported: [...OAUTH_SCOPES],
      resourceServerUrl: new URL("/mcp", routerBase),
      resourceName,
      // Per-address limits on the protocol endpoints; generous, since every MCP client registers itself.
      authorizationOptions: { rateLimit: RATE_LIMIT },
      clientRegistrationOptions: { rateLimit: RATE_LIMIT },
      tokenOptions: { rateLimit: RATE_LIMIT },
      revocationOptions: { rateLimit: RATE_LIMIT },
    }),
  );

  const form = express.urlencoded({ extended: false, limit: "16kb" });
  const field = (req: Request, name: string) =>
    typeof req.body?.[name] === "string" ? (req.body[name] as string) : "";
  const html = (res: Response, status: number, body: string) =>
    res.status(status).type("html").set(PAGE_HEADERS).send(body);

  // Password guessing is slow work for us (argon2) and for the guesser: 100 tries per address per 15 minutes.
  // Kept beside the failure throttle: this sign-in has no per-email limit, so this is its long-run cap.
  const loginLimit = rateLimit({
    windowMs: 15 * 60_000,
    limit: 100,
    validate: false,
    standardHeaders: "draft-7",
    legacyHeaders: false,
  });
  app.post("/oauth/login", loginLimit, form, async (req, res, next) => {
    try {
      const requestId = field(req, "request_id");
      // An address that has used its failure budget is refused before the password is checked (argon2),
      // with the form again (no lookup of the client's name) so that it can be sent once the wait is over.
      const address = req.ip ?? req.socket.remoteAddress ?? "";
      const wait = authFailures?.refusal(address, "oauth");
      if (wait !== undefined) {
        res.set("Retry-After", String(wait));
        return html(
          res,
          429,
          loginPage({
            requestId,
            clientName: "the application",
            error: `Too many failed sign-in attempts from this address. Try again in ${wait} s.`,
          }),
        );
      }
      const result = await services.oauth.login(requestId, field(req, "email"), field(req, "password"));
      if (!result)
        return html(
          res,
          400,
          errorPage("This sign-in link has expired or was already used. Start again from your MCP client."),
        );
      if (result === "bad_credentials") {
        authFailures?.countFailure(address);
        const pending = await services.oauth.pendingRequest(requestId);
        const client = (pending && (await services.oauth.getClient(pending.client_id))) as
          | { client_id: string; client_name?: string }
          | undefined;
        return html(
          res,
          401,
          loginPage({
            requestId,
            clientName: client ? clientName(client) : "the application",
            error: "Wrong email or password.",
          }),
        );
      }
      const client = (await services.oauth.getClient(result.client_id)) as { client_id: string; client_name?: string };
      html(
        res,
        200,
        consentPage({
          requestId: result.id,
          clientName: clientName(client),
          email: field(req, "email"),
          scopes: result.params.scopes,
        }),
      );
    } catch (error) {
      next(error);
    }
  });

  app.post("/oauth/consent", form, async (req, res, next) => {
    try {
      const target = await services.oauth.decide(field(req, "request_id"), field(req, "decision") === "allow");
      if (!target)
        return html(
          res,
          400,
          errorPage("This authorization has expired or was already answered. Start again from your MCP client."),
        );
      res.redirect(302, target);
    } catch (error) {
      next(error);
    }
  });
  // The forms post; a reload or a bookmark of their address gets a page that says where to start again.
  app.all(["/oauth/login", "/oauth/consent"], (_req, res) => {
    html(
      res.set("Allow", "POST"),
      405,
      errorPage("This address takes the sign-in form only. Start again from your MCP client."),
    );
  });

  // The challenges lead to the metadata on the host the request was addressed to.
  const resourceMetadataUrl = (req: Request) =>
    new URL("/.well-known/oauth-protected-resource", origins.of(req.headers.host)).href;
  const bearer = authenticateMcp({
    access: services.access,
    oauth: services.oauth,
    provider,
    resourceMetadataUrl,
    authFailures,
    rateLimiter,
  });

  // The body is read as bytes and parsed here, not by express.json: a tool's numbers keep their exact text
  // (exact-json.ts), and the answer's decimals are written as exact numbers (docs/api.md, "Numbers").
  app.post("/mcp", bearer, express.raw({ type: () => true, limit: "1mb" }), async (req, res, next) => {
    try {
      const { caller, authInfo } = credentialOf(res);
      // An OAuth token serves no tool without one of the two scopes. An API key is let in whatever its
      // scopes: each tool call is judged by the domain services, and its refusal names the scope it lacks.
      if (caller.oauthScopes && !caller.oauthScopes.some((s) => (OAUTH_SCOPES as readonly string[]).includes(s))) {
        res
          .status(403)
          .set(
            "WWW-Authenticate",
            `Bearer error="insufficient_scope", scope="${OAUTH_SCOPES.join(" ")}", resource_metadata="${resourceMetadataUrl(req)}"`,
          );
        return res.json({
          error: "insufficient_scope",
          error_description: `The token needs ${OAUTH_SCOPES.join(" or ")}`,
        });
      }
      let message: unknown;
      let text: string;
      try {
        text = decodeUtf8(Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0), "The body");
      } catch (error) {
        // Bytes that are not UTF-8 are not JSON text (RFC 8259, 8.1): a parse error, said as such.
        return res.status(400).json({
          jsonrpc: "2.0",
          error: { code: -32700, message: `Parse error: ${(error as Error).message}` },
          id: null,
        });
      }
      try {
        message = parseJsonExact(text);
      } catch {
        // The transport's own answer to a body that is not JSON.
        return res
          .status(400)
          .json({ jsonrpc: "2.0", error: { code: -32700, message: "Parse error: Invalid JSON" }, id: null });
      }
      const server = buildMcpServer(services, caller, { publicUrl, logger });
      // Stateless: a new transport per request, so that any process can answer any request.
      const transport = new WebStandardStreamableHTTPServerTransport({
        sessionIdGenerator: undefined,
        enableJsonResponse: true,
      });
      res.on("close", () => {
        void transport.close();
        void server.close();
      });
      await server.connect(transport);
      const headers = new Headers();
      for (const [name, value] of Object.entries(req.headers)) {
        if (typeof value === "string") headers.set(name, value);
        else if (Array.isArray(value)) headers.set(name, value.join(", "));
      }
      const answer = await transport.handleRequest(
        new Request(new URL(req.originalUrl, base), { method: "POST", headers }),
        {
          parsedBody: message,
          ...(authInfo ? { authInfo } : {}),
        },
      );
      res.status(answer.status);
      answer.headers.forEach((value, name) => {
        res.setHeader(name, value);
      });
      res.end(unmarkNumbers(await answer.text()));
    } catch (error) {
      next(error);
    }
  });
  const notAllowed = (_req: Request, res: Response) => {
    res
      .status(405)
      .set("Allow", "POST")
      .json({
        jsonrpc: "2.0",
        error: { code: -32000, message: "Method not allowed: this server is stateless; POST JSON-RPC to /mcp" },
        id: null,
      });
  };
  app.get("/mcp", notAllowed);
  app.delete("/mcp", notAllowed);

  app.use(mcpErrorHandler(logger));
  return app;
}
