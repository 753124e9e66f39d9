// The HTTP surface's Fastify app (buildHttpApp): the server's limits and timeouts, the exact JSON body reader,
// the hooks every request passes (its id, URLs refused at the door, security headers, a log line and metrics),
// 404 and 405 for what nothing routes (client-errors.ts for what node refuses first), and the route plugins:
// the API's in the order the OpenAPI document lists their operations, the agent surface's, the dashboard's.
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import fastifySwagger from "@fastify/swagger";
import Fastify, {
  LogController,
  type FastifyBaseLogger,
  type FastifyInstance,
  type FastifyReply,
  type FastifyRequest,
} from "fastify";
import { validatorCompiler, type ZodTypeProvider } from "fastify-type-provider-zod";
import type { Database } from "../../db/database.js";
import type { Services } from "../../domain/services.js";
import type { Clock } from "../../domain/kernel/clock.js";
import type { Logger } from "../../platform/logger.js";
import type { Metrics } from "../../platform/metrics.js";
import { ValidationError } from "../../domain/kernel/errors.js";
import { decodeUtf8, invalidEncodingError, percentEscapesAreUtf8 } from "../../domain/kernel/storable-text.js";
import { MCP_PATHS, mcpAvailable } from "../mcp/mcp-paths.js";
import { trustedProxyCheck } from "../../platform/client-address.js";
import type { FailureThrottle } from "../../platform/failure-throttle.js";
import { createRateLimiter, type RateLimit } from "../../platform/rate-limiter.js";
import { apiKeyAuth } from "./authenticate.js";
import { answerClientError } from "./client-errors.js";
import { handleError } from "./error-handler.js";
import { bodyMayBeLeftOut } from "./action-body.js";
import { exactJsonReader } from "./json-body.js";
import { openapiOptions } from "./openapi-document.js";
import { exactSerializerCompiler } from "./exact-serializer.js";
import { adminRoutes } from "./routes/admin-routes.js";
import { agreementRoutes, contractRoutes } from "./routes/contract-routes.js";
import { contractPricingRoutes } from "./routes/contract-pricing-routes.js";
import { accountRoutes } from "./routes/account-routes.js";
import { customerRoutes } from "./routes/customer-routes.js";
import { hostedInvoiceRoutes } from "./routes/hosted-invoice-routes.js";
import { invoiceRoutes } from "./routes/invoice-routes.js";
import { invoiceCollectionRoutes } from "./routes/invoice-collection-routes.js";
import { invoiceDeliveryRoutes } from "./routes/invoice-delivery-routes.js";
import { usageRoutes } from "./routes/usage-routes.js";
import { webhookRoutes } from "./routes/webhook-routes.js";
import { referenceRoutes } from "./routes/reference-routes.js";
import { serviceRoutes } from "./routes/service-routes.js";
import { AUTH_PER_ADDRESS, dashboardRoutes, notFoundPage } from "../dashboard/dashboard-app.js";

export interface HttpAppDeps {
  services: Services;
  /** The services' clock: what the dashboard calls "this month". */
  clock: Clock;
  db: Database;
  logger: Logger;
  metrics: Metrics;
  publicUrl: string;
  adminToken: string | undefined;
  /** How long a client has to send its whole request; a slow-loris holds no socket forever. */
  requestTimeoutMs: number;
  /** Requests per API key (null: no limit). */
  rateLimit: RateLimit | null;
  /** Failed authentications per client address, one budget for every surface (null: no limit). */
  authFailures: FailureThrottle | null;
  /** The proxies whose X-Forwarded-For names the client (`address/prefix` ranges; empty: none). */
  trustedProxies: readonly string[];
}

const REQUEST_ID_RE = /^[A-Za-z0-9._-]{1,128}$/;
const BODY_LIMIT_BYTES = 1024 * 1024;

type ExpressApp = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/**
 * Hands the agent surface's paths, and only those, to its express app before Fastify reads the body, so
 * that the rest of the API never goes through express. The routes exist from the start; the express app
 * (with the MCP SDK) is loaded by the first request to one of them, and kept.
 */
function mcpRoutes(load: () => Promise<ExpressApp>) {
  return async (app: FastifyInstance) => {
    let loaded: ExpressApp | undefined;
    let loading: Promise<ExpressApp> | undefined;
    for (const url of MCP_PATHS) {
      app.route({
        method: ["GET", "POST", "DELETE", "OPTIONS"],
        url,
        schema: { hide: true },
        onRequest: (request, reply, done) => {
          reply.hijack();
          // Express swaps the prototypes of req and res for its own; keep the methods of the objects we
          // were given (fastify.inject's are not node's) as own properties, which survive the swap.
          pinMethods(request.raw);
          pinMethods(reply.raw);
          // The client's address as Fastify derived it (trusted proxies and all), over express's own `req.ip`,
          // so that the failure throttle and the sign-in limits of the agent surface count the same client.
          Object.defineProperty(request.raw, "ip", { value: request.ip, writable: true, configurable: true });
          const send = (status: number, body: object) => {
            reply.raw.statusCode = status;
            reply.raw.setHeader("content-type", "application/json");
            reply.raw.end(JSON.stringify(body));
          };
          const run = (expressApp: ExpressApp) =>
            expressApp(request.raw, reply.raw, () => send(404, { error: "Not found", code: "not_found" }));
          if (loaded) {
            run(loaded);
          } else {
            // The body stays unread in the request stream meanwhile. A failed load is tried again by the next request.
            loading ??= load().then(
              (expressApp) => (loaded = expressApp),
              (error: unknown) => {
                loading = undefined;
                throw error;
              },
            );
            loading.then(run).catch((error: unknown) => {
              request.log.error({ err: error }, "mcp surface error");
              if (!reply.raw.headersSent) send(500, { error: "Internal server error", code: "internal_error" });
            });
          }
          void done;
        },
        handler: async () => undefined,
      });
    }
  };
}

function pinMethods(target: object): void {
  const proto = Object.getPrototypeOf(target) as Record<string, unknown>;
  for (const name of Object.getOwnPropertyNames(proto)) {
    if (name === "constructor") continue;
    const descriptor = Object.getOwnPropertyDescriptor(proto, name);
    if (descriptor && typeof descriptor.value === "function" && !Object.hasOwn(target, name)) {
      Object.defineProperty(target, name, { value: descriptor.value, writable: true, configurable: true });
    }
  }
}

/**
 * The methods each route path answers, for the 405 of a method a known path does not take (with its
 * `Allow`): Fastify answers 404 there. Collected from every route as it is added. A path is the route it most
 * specifically matches, as the router reads it (a literal segment before a parameter, from the left):
 * `/v1/billing/contracts/extract` is its own POST route, not `/v1/billing/contracts/:ext_id`'s GET.
 */
function routeMethods(app: FastifyInstance): {
  methodsOf: (path: string) => string[];
  /** Whether a literal route shares paths with this parameter route (`/contracts/extract`, `/contracts/:ext_id`). */
  mayBeShadowed: (routeUrl: string) => boolean;
} {
  const routes: { url: string; pattern: RegExp; rank: string; methods: string[] }[] = [];
  app.addHook("onRoute", (route) => {
    const segments = route.url.replace(/\/+$/, "").split("/");
    const source = segments
      .map((segment) =>
        segment.startsWith(":") ? "[^/]+" : segment === "*" ? ".*" : segment.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"),
      )
      .join("/");
    // Literal segments rank above parameters, parameters above a wildcard: a larger rank is more specific.
    const rank = segments.map((segment) => (segment.startsWith(":") ? "1" : segment === "*" ? "0" : "2")).join("");
    routes.push({
      url: route.url,
      pattern: new RegExp(`^${source}/?$`),
      rank,
      methods: [route.method].flat().map(String),
    });
  });
  const methodsOf = (path: string) => {
    const matching = routes.filter((route) => route.pattern.test(path));
    const best = matching.reduce((top, route) => (route.rank > top ? route.rank : top), "");
    const methods = new Set(matching.filter((route) => route.rank === best).flatMap((route) => route.methods));
    if (methods.has("GET")) methods.add("HEAD");
    return [...methods].sort();
  };
  const shadowed = new Map<string, boolean>();
  const mayBeShadowed = (routeUrl: string) => {
    let answer = shadowed.get(routeUrl);
    if (answer === undefined) {
      const own = routes.find((route) => route.url === routeUrl);
      answer =
        own !== undefined &&
        own.rank.includes("1") &&
        routes.some(
          (route) => route.rank > own.rank && route.rank.length === own.rank.length && own.pattern.test(route.url),
        );
      shadowed.set(routeUrl, answer);
    }
    return answer;
  };
  return { methodsOf, mayBeShadowed };
}

// The first path segments of the API, the agent surface and the service endpoints: an unknown URL under them
// answers the JSON 404 even to a browser, since a client of theirs reads `{ error, code }`.
const API_SEGMENTS = new Set([
  "v1",
  "admin",
  "oauth",
  ".well-known",
  "healthz",
  "readyz",
  "metrics",
  "docs",
  ...MCP_PATHS.map((path) => path.split("/")[1]!),
]);

/** Whether an unknown URL is a browser's among the dashboard's pages (it asks for HTML, outside the API's paths). */
function wantsDashboardPage(request: FastifyRequest): boolean {
  const segment = (request.url.split(/[/?#]/)[1] ?? "").toLowerCase();
  return !API_SEGMENTS.has(segment) && /\btext\/html\b/i.test(request.headers.accept ?? "");
}

/** Builds the HTTP surface. Routes parse, call one service, present; errors are mapped in error-handler.ts. */
export async function buildHttpApp(deps: HttpAppDeps): Promise<FastifyInstance> {
  const app = Fastify({
    loggerInstance: deps.logger as FastifyBaseLogger,
    logController: new LogController({ disableRequestLogging: true }), // one line per request, in onResponse below
    bodyLimit: BODY_LIMIT_BYTES,
    requestTimeout: deps.requestTimeoutMs,
    // Node checks request deadlines every connectionsCheckingInterval (30 s by default): check often enough
    // that a deadline is kept to within a tenth of itself.
    // Given to node's createServer as well: a request timeout set only afterwards (as Fastify does) is not
    // enforced once the headers are in, so a client that stalls in the body would hold its socket.
    http: {
      requestTimeout: deps.requestTimeoutMs,
      headersTimeout: Math.min(deps.requestTimeoutMs, 60_000),
      connectionsCheckingInterval: Math.max(100, Math.min(30_000, Math.round(deps.requestTimeoutMs / 10))),
    },
    genReqId: (req) => {
      const given = req.headers["x-request-id"];
      return typeof given === "string" && REQUEST_ID_RE.test(given) ? given : randomUUID();
    },
    // Ids run to 255 characters (more once percent-encoded); Fastify's default of 100 answered 414 for
    // longer ones before the route's own schema could say why.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: 2048 },
    clientErrorHandler: (error, socket) => answerClientError(methodsOf)(error, socket),
    // request.ip is the client behind our own proxies (BILLING_TRUSTED_PROXIES, platform/client-address.ts),
    // for every use of it: the failure throttle, the per-address limits, the MCP surface. Without proxies, the
    // TCP peer, and X-Forwarded-For is ignored.
    trustProxy: deps.trustedProxies.length > 0 ? trustedProxyCheck(deps.trustedProxies) : false,
    // Errors Fastify raises before routing (a malformed URL, say) get the same { error, code } shape; a URL
    // whose escapes are not UTF-8 is said to be so.
    frameworkErrors: (error, request, reply) =>
      handleError(percentEscapesAreUtf8(request.url ?? "") ? error : invalidEncodingError("The URL"), request, reply),
  }).withTypeProvider<ZodTypeProvider>();
  const { methodsOf, mayBeShadowed } = routeMethods(app as unknown as FastifyInstance);

  app.setValidatorCompiler(validatorCompiler);
  app.setSerializerCompiler(exactSerializerCompiler);
  app.setErrorHandler(handleError);
  // A path nothing routes is a 404, and a method a known path does not take a 405 with `Allow`, decided
  // before any body is read (Fastify reads a body even for a request it routes nowhere, and refuses it first).
  // A browser lost among the dashboard's pages gets a page with a way home; everything else the API's JSON 404.
  const dashboardNotFound = notFoundPage(deps);
  const allowedAt = (request: FastifyRequest) => methodsOf((request.url.split("?")[0] ?? "/").replace(/\/+$/, ""));
  const notRouted = (request: FastifyRequest, reply: FastifyReply) => {
    const allow = allowedAt(request);
    if (allow.length > 0 && !allow.includes(request.method)) return methodNotAllowed(reply, request.method, allow);
    if (wantsDashboardPage(request)) return dashboardNotFound(request, reply);
    return reply.code(404).send({ error: "Not found", code: "not_found" });
  };
  const methodNotAllowed = (reply: FastifyReply, method: string, allow: string[]) =>
    reply
      .code(405)
      .header("allow", allow.join(", "))
      .send({
        error: `${method} is not allowed here; this path takes ${allow.join(", ")}`,
        code: "method_not_allowed",
      });
  app.setNotFoundHandler(notRouted);
  app.decorateRequest("actor", undefined);

  // Bodies are JSON only (docs/api.md, "Conventions"): anything else is 415, not a 400 from Fastify's text/plain parser.
  app.removeContentTypeParser("text/plain");

  // PostgreSQL text holds neither NUL nor unpaired surrogates (storable-text.ts): refuse them at the door, for
  // every endpoint, as a 400 rather than a 500 or a silently altered value.
  // Numbers keep their exact text where a double would change them (exact-json.ts, docs/api.md "Numbers").
  const readJson = exactJsonReader(app);
  // Read as bytes: a lenient decoding would store bytes that are not UTF-8 as U+FFFD (storable-text.ts).
  app.addContentTypeParser("application/json", { parseAs: "buffer" }, (request, body, done) => {
    let value: unknown;
    try {
      const text = decodeUtf8(body as Buffer, "The body");
      // An action that may be left without a body (action-body.ts) may still say application/json.
      if (text.trim() === "" && bodyMayBeLeftOut(request.routeOptions.schema?.body)) return done(null, undefined);
      value = readJson(request, text);
    } catch (error) {
      return done(error as Error, undefined);
    }
    done(null, value);
  });
  app.addHook("onRequest", async (request) => {
    if (/%00/.test(request.url))
      throw new ValidationError("The URL must not contain NUL characters (%00)", "invalid_request");
    // A path or query whose escapes are not UTF-8 (`%FF`, `%C0%AF`) would reach the routes as U+FFFD.
    if (!percentEscapesAreUtf8(request.url)) throw invalidEncodingError("The URL");
  });

  app.addHook("onRequest", async (request, reply) => {
    void reply.header("request-id", request.id);
  });
  app.addHook("onRequest", async (request, reply) => {
    if (request.is404) return notRouted(request, reply);
    // The router hands `GET /v1/billing/contracts/extract` to `/contracts/:ext_id` when the literal path has no
    // GET: the path is the literal route's, so the method is refused as on any path (405 with its `Allow`).
    const route = request.routeOptions.url;
    if (route !== undefined && mayBeShadowed(route)) {
      const allow = allowedAt(request);
      if (!allow.includes(request.method)) return methodNotAllowed(reply, request.method, allow);
    }
  });
  const httpsOnly = deps.publicUrl.startsWith("https://");
  // Graceful shutdown: a request in flight when close() begins still finishes, but its keep-alive
  // connection would then hold the close (and the exit) until the client's idle timeout. Ask the client to
  // hang up after this answer. (Fastify does this itself only for requests that arrive after close().)
  let closing = false;
  app.addHook("preClose", async () => {
    closing = true;
  });
  app.addHook("onSend", async (_request, reply) => {
    if (closing) void reply.header("connection", "close");
    void reply.header("x-content-type-options", "nosniff");
    void reply.header("x-frame-options", "DENY");
    void reply.header("referrer-policy", "no-referrer");
    if (!reply.hasHeader("cache-control")) void reply.header("cache-control", "no-store");
    if (httpsOnly) void reply.header("strict-transport-security", "max-age=31536000; includeSubDomains");
  });
  app.addHook("onResponse", async (request, reply) => {
    const route = request.routeOptions.url ?? "unmatched";
    deps.metrics.httpRequests.inc({ method: request.method, route, status: reply.statusCode });
    deps.metrics.httpDuration.observe({ method: request.method, route }, reply.elapsedTime / 1000);
    request.log.info(
      { method: request.method, route, status: reply.statusCode, ms: Math.round(reply.elapsedTime * 10) / 10 },
      "request",
    );
  });

  await app.register(fastifySwagger, openapiOptions(deps.publicUrl));

  // One request budget per API key (or OAuth grant) and process, spent on the API and on MCP alike.
  const rateLimiter = deps.rateLimit ? createRateLimiter(deps.rateLimit) : null;
  await app.register(serviceRoutes({ db: deps.db, metrics: deps.metrics }));
  // The browsable reference of the same document, at /docs.
  await app.register(referenceRoutes(deps.publicUrl));

  // The agent surface (OAuth 2.1 + MCP) is an express app from the MCP SDK's building blocks.
  if (mcpAvailable(deps.publicUrl)) {
    // Imported on first use: the MCP SDK and express cost ~17 MB of memory once loaded (docs/performance.md, peak RSS).
    const { services, publicUrl, logger, authFailures } = deps;
    await app.register(
      mcpRoutes(async () =>
        (await import("../mcp/mcp-app.js")).createMcpApp({ services, publicUrl, logger, authFailures, rateLimiter }),
      ),
    );
  } else {
    deps.logger.warn(
      { public_url: deps.publicUrl },
      "MCP and OAuth are off: BILLING_PUBLIC_URL must be https (or a loopback address: localhost, 127.0.0.1, [::1])",
    );
  }
  await app.register(agreementRoutes(deps.services));
  // An invoice's page for its customer, at /i/{token}: no key, the token is the capability.
  await app.register(hostedInvoiceRoutes(deps.services));
  // The account holder's web pages at `/` (session cookie + CSRF token, never an API key).
  await app.register(
    dashboardRoutes({
      services: deps.services,
      clock: deps.clock,
      publicUrl: deps.publicUrl,
      authRateLimit: deps.rateLimit ? AUTH_PER_ADDRESS : null,
      authFailures: deps.authFailures,
      sessionRateLimit: deps.rateLimit,
    }),
  );
  if (deps.adminToken) await app.register(adminRoutes(deps.services, deps.adminToken, deps.authFailures));

  // Everything under /v1 (but the OpenAPI document) needs an API key.
  await app.register(async (v1) => {
    v1.addHook("onRequest", apiKeyAuth(deps.services.access, rateLimiter, deps.authFailures));
    await v1.register(accountRoutes(deps.services));
    await v1.register(customerRoutes(deps.services));
    await v1.register(contractRoutes(deps.services));
    await v1.register(contractPricingRoutes(deps.services, deps.clock));
    await v1.register(usageRoutes(deps.services));
    await v1.register(invoiceRoutes(deps.services));
    await v1.register(invoiceCollectionRoutes(deps.services));
    await v1.register(invoiceDeliveryRoutes(deps.services));
    await v1.register(webhookRoutes(deps.services));
  });

  return app as unknown as FastifyInstance;
}
