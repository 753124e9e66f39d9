// What every dashboard page needs: the request's viewer, form fields, replies, and form errors. The pages and
// dashboard-app.ts import this module; dashboard-app.ts imports the pages, never the reverse.
import type { FastifyReply, FastifyRequest } from "fastify";
import type { DashboardSession } from "../../domain/access/access-service.js";
import { DomainError, ValidationError } from "../../domain/kernel/errors.js";
import type { Services } from "../../domain/services.js";
import type { FailureThrottle } from "../../platform/failure-throttle.js";
import type { RateLimit } from "../../platform/rate-limiter.js";
import { toHttpError } from "../http/error-handler.js";
import type { Flash, PageContext } from "./layout.js";

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
  /** Sign-up attempts per client address (null: no limit). Per-email login limits always apply. */
  authRateLimit: RateLimit | null;
  /** Wrong sign-in passwords per client address, shared with the other surfaces (null: BILLING_AUTH_FAILURES=off). */
  authFailures: FailureThrottle | null;
  /** Requests per signed-in session, like the API's per key (null: no limit). */
  sessionRateLimit: RateLimit | null;
}

/** What a page handler gets: the signed-in company (as an actor for the services) and its page context. */
export interface Viewer {
  session: DashboardSession;
  ctx: PageContext;
}

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
