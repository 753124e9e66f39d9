import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import type { DashboardSession } from "../../domain/access/access-service.js";
import { DomainError, ValidationError } from "../../domain/kernel/errors.js";
import type { Services } from "../../domain/services.js";
import { unstorableText } from "../../domain/kernel/storable-text.js";
import { toHttpError } from "../http/error-handler.js";
import { createRateLimiter, type RateLimit } from "../../platform/rate-limiter.js";
import { DASHBOARD_CSS, DASHBOARD_JS } from "./assets.js";
import { clearCookie, readCookie, SESSION_COOKIE } from "./cookies.js";
import { html } from "./html.js";
import { authPage, page, type Flash, type PageContext } from "./layout.js";
import { apiKeyPages } from "./pages/api-key-pages.js";
import { authPages } from "./pages/auth-pages.js";
import { contractPages } from "./pages/contract-pages.js";
import { customerPages } from "./pages/customer-pages.js";
import { invoicePages } from "./pages/invoice-pages.js";
import { overviewPage } from "./pages/overview-page.js";
import { usagePages } from "./pages/usage-pages.js";
import { webhookPages } from "./pages/webhook-pages.js";

declare module "fastify" {
  interface FastifyRequest {
    dashboard: { session: DashboardSession; token: string } | undefined;
  }
  interface FastifyContextConfig {
    /** Dashboard routes reachable without a session (sign-in, sign-up, assets). */
    dashboardPublic?: boolean;
  }
}

export interface DashboardDeps {
  services: Services;
  publicUrl: string;
  /** Sign-in and sign-up attempts per client address (null: no limit). Per-email login limits always apply. */
  authRateLimit: RateLimit | null;
  /** Requests per signed-in session, like the API's per key (null: no limit). */
  sessionRateLimit: RateLimit | null;
}

/** What a page handler gets: the signed-in company (as an actor for the services) and its page context. */
export interface Viewer {
  session: DashboardSession;
  ctx: PageContext;
}

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

export const FORM_BODY_LIMIT_BYTES = 64 * 1024;

/** Form fields, parsed from application/x-www-form-urlencoded. */
export type FormBody = URLSearchParams;

export function viewerOf(request: FastifyRequest): Viewer {
  const dashboard = request.dashboard;
  if (!dashboard) throw new Error("dashboard route without a session");
  const path = request.url.split("?")[0] ?? "/";
  return {
    session: dashboard.session,
    ctx: { companyName: dashboard.session.companyName, email: dashboard.session.user.email, csrfToken: dashboard.session.csrfToken, path },
  };
}

export function formOf(request: FastifyRequest): FormBody {
  return request.body instanceof URLSearchParams ? request.body : new URLSearchParams();
}

/** A form field's value, trimmed; undefined when absent or blank. */
export function field(form: FormBody, name: string): string | undefined {
  const value = form.get(name)?.trim();
  return value === undefined || value === "" ? undefined : value;
}

export function sendPage(reply: FastifyReply, markup: string, status = 200): FastifyReply {
  return reply.code(status).type("text/html; charset=utf-8").send(markup);
}

/** After a successful POST: see-other to a page (Post/Redirect/Get), so a reload does not resend the form. */
export function seeOther(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).header("location", location).send();
}

/** A domain error (bad input, not found, conflict) as the status and sentence a form shows. */
export function formFailure(error: unknown): { status: number; flash: Flash } {
  if (!(error instanceof DomainError)) throw error;
  const { status, body } = toHttpError(error);
  const detail = body.details?.[0];
  const message = detail && !body.error.includes(detail.message) ? `${body.error} (${detail.path}: ${detail.message})` : body.error;
  return { status, flash: { kind: "error", message } };
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

    app.addContentTypeParser(
      "application/x-www-form-urlencoded",
      { parseAs: "string", bodyLimit: FORM_BODY_LIMIT_BYTES },
      (_request, body, done) => {
        const form = new URLSearchParams(body as string);
        // Every key and every value, repeated fields included: a page may read any copy of a field.
        const problems = unstorableText([...form].flat());
        if (problems.length > 0) {
          done(Object.assign(new Error("The form holds characters that cannot be stored (NUL or a broken character)"), { statusCode: 400 }), undefined);
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
      if (String(reply.getHeader("content-type") ?? "").startsWith("text/html")) void reply.header("content-security-policy", CSP);
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
      if (request.method !== "GET" && request.method !== "HEAD") {
        const presented = formOf(request).get("_csrf") ?? (request.headers["x-csrf-token"] as string | undefined);
        if (!deps.services.access.csrfTokenMatches(token, presented ?? undefined)) {
          return sendPage(
            reply,
            authPage(
              "Form expired",
              html`<p class="alert error" role="alert">This request did not come with this session's form token, so it was not carried out. Go back, reload the page and try again.</p><p><a href="/">Back to the dashboard</a></p>`,
            ),
            403,
          );
        }
      }
      if (sessionLimiter) {
        const verdict = sessionLimiter.take(session.actor.credentialId);
        if (!verdict.allowed) {
          const seconds = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
          void reply.header("retry-after", String(seconds));
          return sendPage(reply, authPage("Too many requests", html`<p class="alert error" role="alert">Too many requests from this session. Try again in ${seconds} s.</p>`), 429);
        }
      }
      request.dashboard = { session, token };
    });

    app.setErrorHandler((error, request, reply) => {
      const { status, body, unexpected } = toHttpError(error);
      if (unexpected) request.log.error({ err: error }, "unhandled dashboard error");
      const message = unexpected ? "Something went wrong on our side. Please try again." : status === 404 ? "This page or record does not exist." : body.error;
      const content = html`<div class="alert error" role="alert"><p>${message}</p></div><p><a href="/">Back to the overview</a></p>`;
      const markup = request.dashboard ? page(viewerOf(request).ctx, status === 404 ? "Not found" : "Something went wrong", content) : authPage("Something went wrong", content);
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
    await contractPages(app, deps);
    await usagePages(app, deps);
    await invoicePages(app, deps);
    await webhookPages(app, deps);
    await apiKeyPages(app, deps);
  };
}

/**
 * Form values through the API's own request schema (the same zod object the HTTP route validates with), so
 * a form accepts exactly what the API accepts. A refusal is a ValidationError naming the field.
 */
export function parseWith<T>(schema: { safeParse(value: unknown): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } } }, value: unknown): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    // A blank form field arrives as undefined: say so in words a person filling in a form understands.
    message: /received undefined/.test(issue.message) ? "is required" : issue.message,
  }));
  const first = details[0];
  throw new ValidationError(first ? `${first.path ? `${first.path}: ` : ""}${first.message}` : "Invalid input", "invalid_request", details);
}
