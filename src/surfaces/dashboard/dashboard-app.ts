import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  decodeUtf8,
  invalidEncodingError,
  percentEscapesAreUtf8,
  unstorableText,
} from "../../domain/kernel/storable-text.js";
import { RateLimitedError } from "../../domain/kernel/errors.js";
import { toHttpError } from "../http/error-handler.js";
import { createRateLimiter, type RateLimit } from "../../platform/rate-limiter.js";
import { DASHBOARD_CSS, DASHBOARD_JS } from "./assets.js";
import { clearCookie, readCookie, SESSION_COOKIE } from "./cookies.js";
import { html } from "./html.js";
import { authPage, page } from "./layout.js";
import { formOf, pageContext, seeOther, sendFormExpired, sendPage, viewerOf, type DashboardDeps } from "./page-kit.js";
import { acceptMultipart } from "../http/multipart-form.js";
import { contractUploadPages } from "./pages/contract-upload-pages.js";
import { apiKeyPages } from "./pages/api-key-pages.js";
import { accountPages } from "./pages/account-pages.js";
import { authPages } from "./pages/auth-pages.js";
import { contractPages } from "./pages/contract-pages.js";
import { customerPages } from "./pages/customer-pages.js";
import { invoicePages } from "./pages/invoice-pages.js";
import { overviewPage } from "./pages/overview-page.js";
import { receivablesPage } from "./pages/receivables-page.js";
import { usagePages } from "./pages/usage-pages.js";
import { webhookPages } from "./pages/webhook-pages.js";

// Sign-up attempts per client address: 30 at once, then one every 2 seconds (off with BILLING_RATE_LIMIT=off,
// since an office behind one NAT address would share it). Sign-in per address is the failure throttle's
// (BILLING_AUTH_FAILURES): it counts wrong passwords only, so such an office's colleagues are never refused.
export const AUTH_PER_ADDRESS: RateLimit = { capacity: 30, perSecond: 1 / 2 };

const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

const FORM_BODY_LIMIT_BYTES = 64 * 1024;

/**
 * The page a browser gets for a URL nothing answers (http-app.ts decides who gets it; API clients keep the JSON
 * 404): in the dashboard's layout, with the navigation when signed in, and a way home either way.
 */
export function notFoundPage(deps: Pick<DashboardDeps, "services">) {
  return async (request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> => {
    const token = readCookie(request, SESSION_COOKIE);
    const session = token ? await deps.services.access.resumeSession(token) : undefined;
    const path = request.url.split("?")[0] ?? "/";
    const content = html`<div class="alert error" role="alert"><p>There is no page at <code>${path}</code>. The link may be mistyped, or the page may have moved.</p></div>
<p><a href="/">${session ? "Back to the overview" : "Go to the dashboard"}</a></p>`;
    void reply.header("content-security-policy", CSP);
    return sendPage(
      reply,
      session
        ? page(pageContext(session, request.url), "Page not found", content)
        : authPage("Page not found", content),
      404,
    );
  };
}

/**
 * The account holder's web pages, served at `/` by the same process as the API. Pages are rendered on the
 * server by calling the same domain services the API calls, so no business rule lives in the browser.
 */
export function dashboardRoutes(deps: DashboardDeps) {
  return async (app: FastifyInstance) => {
    app.decorateRequest("dashboard", undefined);
    const sessionLimiter = deps.sessionRateLimit ? createRateLimiter(deps.sessionRateLimit) : null;
    // Web pages are not API endpoints: keep them out of /v1/openapi.json.
    app.addHook("onRoute", (route) => {
      route.schema = { ...(route.schema ?? {}), hide: true };
    });

    acceptMultipart(app);
    app.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "buffer", bodyLimit: FORM_BODY_LIMIT_BYTES },
      (_request, body, done) => {
        // Bytes, or escapes, that are not UTF-8 would be read as U+FFFD by URLSearchParams: refused instead.
        let text: string;
        try {
          text = decodeUtf8(body as Buffer, "The form");
        } catch (error) {
          return done(error as Error, undefined);
        }
        if (!percentEscapesAreUtf8(text)) return done(invalidEncodingError("The form"), undefined);
        const form = new URLSearchParams(text);
        // Every key and every value, repeated fields included: a page may read any copy of a field.
        const problems = unstorableText([...form].flat());
        if (problems.length > 0) {
          done(
            Object.assign(new Error("The form holds characters that cannot be stored (NUL or a broken character)"), {
              statusCode: 400,
            }),
            undefined,
          );
          return;
        }
        done(null, form);
      },
    );

    // A repeated query parameter (?status=a&status=b) arrives as an array; pages read one value, as a form's
    // `get` does: the first.
    app.addHook("preValidation", async (request) => {
      const query = request.query as Record<string, unknown> | undefined;
      if (!query || typeof query !== "object") return;
      for (const [key, value] of Object.entries(query)) if (Array.isArray(value)) query[key] = value[0];
    });

    app.addHook("onSend", async (_request, reply) => {
      if (String(reply.getHeader("content-type") ?? "").startsWith("text/html"))
        void reply.header("content-security-policy", CSP);
    });

    // Signed in, or sent to the login page; every POST also proves it came from our own form.
    app.addHook("preHandler", async (request, reply) => {
      if (request.routeOptions.config?.dashboardPublic) return;
      const token = readCookie(request, SESSION_COOKIE);
      const session = token ? await deps.services.access.resumeSession(token) : undefined;
      if (!token || !session) {
        if (token) clearCookie(reply, SESSION_COOKIE);
        const next = request.method === "GET" ? request.url : undefined;
        return seeOther(reply, next && next !== "/" ? `/login?next=${encodeURIComponent(next)}` : "/login");
      }
      // A multipart form's token is its first field: its route checks it before reading the file (multipart-form.ts).
      if (request.method !== "GET" && request.method !== "HEAD" && !request.routeOptions.config?.multipartForm) {
        const presented = formOf(request).get("_csrf") ?? (request.headers["x-csrf-token"] as string | undefined);
        if (!deps.services.access.csrfTokenMatches(token, presented ?? undefined)) return sendFormExpired(reply);
      }
      if (sessionLimiter) {
        const verdict = sessionLimiter.take(session.actor.credentialId);
        if (!verdict.allowed) {
          const seconds = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
          void reply.header("retry-after", String(seconds));
          return sendPage(
            reply,
            authPage(
              "Too many requests",
              html`<p class="alert error" role="alert">Too many requests from this session. Try again in ${seconds} s.</p>`,
            ),
            429,
          );
        }
      }
      request.dashboard = { session, token };
    });

    app.setErrorHandler((error, request, reply) => {
      const { status, body, unexpected } = toHttpError(error);
      if (unexpected) request.log.error({ err: error }, "unhandled dashboard error");
      // A document its company's turn could not take (too_many_documents), and the like: when to try again.
      if (error instanceof RateLimitedError) void reply.header("retry-after", String(error.retryAfterSeconds));
      const message = unexpected
        ? "Something went wrong on our side. Please try again."
        : status === 404
          ? "This page or record does not exist."
          : body.error;
      const content = html`<div class="alert error" role="alert"><p>${message}</p></div><p><a href="/">Back to the overview</a></p>`;
      const markup = request.dashboard
        ? page(viewerOf(request).ctx, status === 404 ? "Not found" : "Something went wrong", content)
        : authPage("Something went wrong", content);
      void sendPage(reply, markup, status);
    });

    app.get("/assets/dashboard.css", { config: { dashboardPublic: true } }, async (_request, reply) =>
      reply.type("text/css; charset=utf-8").header("cache-control", "public, max-age=300").send(DASHBOARD_CSS),
    );
    app.get("/assets/dashboard.js", { config: { dashboardPublic: true } }, async (_request, reply) =>
      reply.type("text/javascript; charset=utf-8").header("cache-control", "public, max-age=300").send(DASHBOARD_JS),
    );

    await authPages(app, deps);
    await overviewPage(app, deps);
    await customerPages(app, deps);
    await contractUploadPages(app, deps);
    await contractPages(app, deps);
    await usagePages(app, deps);
    await invoicePages(app, deps);
    await receivablesPage(app, deps);
    await webhookPages(app, deps);
    await apiKeyPages(app, deps);
    await accountPages(app, deps);
  };
}
