// What every dashboard page needs: the request's viewer, form fields, replies, and form errors. The pages and
// dashboard-app.ts import this module; dashboard-app.ts imports the pages, never the reverse.
import type { FastifyReply, FastifyRequest } from "fastify";
import type { DashboardSession } from "../../domain/access/dashboard-sessions.js";
import type { Clock } from "../../domain/kernel/clock.js";
import { DATES_OUT_OF_ORDER } from "../../domain/kernel/calendar-date.js";
import { DomainError, ValidationError } from "../../domain/kernel/errors.js";
import type { Services } from "../../domain/services.js";
import type { FailureThrottle } from "../../platform/failure-throttle.js";
import type { RateLimit } from "../../platform/rate-limiter.js";
import { toHttpError } from "../http/error-handler.js";
import { html } from "./html.js";
import { authPage, type Flash, type PageContext } from "./layout.js";

declare module "fastify" {
  interface FastifyRequest {
    dashboard: { session: DashboardSession; token: string } | undefined;
  }
  interface FastifyContextConfig {
    /** Dashboard routes reachable without a session (sign-in, sign-up, assets). */
    dashboardPublic?: boolean;
    /** A multipart form: the route checks its CSRF token itself, before reading the file. */
    multipartForm?: boolean;
  }
}

export interface DashboardDeps {
  services: Services;
  /** The services' clock: "this month" on a page is the service's month, never the browser's. */
  clock: Clock;
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
  return { session: dashboard.session, ctx: pageContext(dashboard.session, request.url) };
}

/** What a signed-in page shows of its viewer, for the page at `url`. */
export function pageContext(session: DashboardSession, url: string): PageContext {
  return {
    companyName: session.companyName,
    email: session.user.email,
    csrfToken: session.csrfToken,
    path: url.split("?")[0] ?? "/",
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

/** A state-changing request without this session's form token: refused, nothing done. */
export function sendFormExpired(reply: FastifyReply): FastifyReply {
  return sendPage(
    reply,
    authPage(
      "Form expired",
      html`<p class="alert error" role="alert">This request did not come with this session's form token, so it was not carried out. Go back, reload the page and try again.</p><p><a href="/">Back to the dashboard</a></p>`,
    ),
    403,
  );
}

export function sendPage(reply: FastifyReply, markup: string, status = 200): FastifyReply {
  return reply.code(status).type("text/html; charset=utf-8").send(markup);
}

/** After a successful POST: see-other to a page (Post/Redirect/Get), so a reload does not resend the form. */
export function seeOther(reply: FastifyReply, location: string): FastifyReply {
  return reply.code(303).header("location", location).send();
}

/** A form's errors by field name: each is shown beside its field (layout.ts, `fieldError`). */
export type FieldErrors = Partial<Record<string, string>>;

/**
 * A domain error (bad input, not found, conflict) as a form shows it: the status, every error that names a
 * field beside that field in plain words, and a summary sentence at the top. `fieldOf` maps an error's
 * path (`rules.2.amount`) to the form's field (`usage_amount_1`); `labels` names the fields in the words a
 * message may use for them (`start_date` → "the start date").
 */
export function formFailure(
  error: unknown,
  fieldOf: (path: string) => string | undefined = () => undefined,
  labels: Record<string, string> = {},
): FormFailure {
  if (!(error instanceof DomainError)) throw error;
  const { status, body } = toHttpError(error);
  const fields: FieldErrors = {};
  const unplaced: { path: string; message: string }[] = [];
  for (const detail of body.details ?? []) {
    const name = detail.path ? fieldOf(detail.path) : undefined;
    if (name === undefined) unplaced.push(detail);
    else fields[name] ??= plainWords(detail.message, labels);
  }
  if (Object.keys(fields).length > 0) {
    return placedFailure(
      status,
      fields,
      unplaced.map((d) => `${labels[d.path] ?? d.path}: ${plainWords(d.message, labels)}`),
    );
  }
  const detail = unplaced[0];
  const message =
    detail && !body.error.includes(detail.message)
      ? `${body.error} (${detail.path}: ${plainWords(detail.message, labels)})`
      : body.error;
  return { status, flash: { kind: "error", message }, fields };
}

export interface FormFailure {
  status: number;
  flash: Flash;
  fields: FieldErrors;
}

/**
 * A form's failure whose errors sit beside their fields: the status, the fields, and the one summary line every
 * form shows above them (with what no field took, `also`). For errors a page places itself too (a conflict
 * beside the field it is about).
 */
export function placedFailure(status: number, fields: FieldErrors, also: readonly string[] = []): FormFailure {
  const placed = Object.keys(fields).length;
  const message = `${placed === 1 ? "One field needs" : `${placed} fields need`} your attention: see the message beside ${placed === 1 ? "it" : "each"}.${also.length > 0 ? ` Also: ${also.join(" ")}` : ""}`;
  return { status, flash: { kind: "error", message }, fields };
}

// What schema and domain messages say, in the words of someone filling in a form. The API keeps its own
// wording (a developer reads it); a page shows this one, beside the field it is about.
const PLAIN_WORDS: Array<[RegExp, string | ((...groups: string[]) => string)]> = [
  [/^(Invalid input: expected \w+, received undefined|is required)$/, "This field is required."],
  [/^Too small: expected string to have >=1 characters?$/, "This field is required."],
  [/^Too big: expected string to have <=(\d+) characters?$/, (n) => `Too long: at most ${n} characters.`],
  [/^Invalid (ISO )?date$/, "Enter a real date, as YYYY-MM-DD."],
  [/^Invalid email address$/, "Enter an email address such as billing@example.com."],
  [/^Invalid input: expected number, received string$/, "Enter a whole number."],
  [/^Invalid input: expected int, received number$/, "Enter a whole number."],
  [/^Too small: expected number to be >=(\S+)$/, (n) => `Enter ${n} or more.`],
  [/^Too big: expected number to be <=(\S+)$/, (n) => `Enter ${n} or less.`],
  [/^is required on a flat rule/, "Enter a price per unit (or a rate, for a percentage price)."],
  [/^is required on a percentage rule$/, "Enter the rate: a fraction, 0.029 is 2.9%."],
  [/^is required on a usage rule$/, "Enter the metric: the name usage events send."],
  [/^is for flat rules; a percentage rule has a rate$/, "Give a price per unit or a rate, not both."],
  [/^is for percentage rules; a flat rule has an amount$/, "Give a price per unit or a rate, not both."],
  [
    /^Invalid option: expected one of (.*)$/,
    (options) => `Choose one of ${options.replaceAll('"', "").replaceAll("|", ", ")}.`,
  ],
  [
    /^(\w+ )?must be a decimal number such as 12\.5.*$/,
    "Enter a number such as 12.50 (digits and one decimal point, no currency sign or commas).",
  ],
  [/^(\w+ )?must not be negative$/, "Enter zero or more: a price cannot be negative."],
  [/^(?:\w+ )?has more than (\d+) decimal places$/, (n) => `Too many decimals: at most ${n} after the point.`],
  [
    /^(\w+ )?(has too many digits|must be less than 10\^15).*$/,
    "Too large: at most 15 digits before the decimal point.",
  ],
  [new RegExp(`^${DATES_OUT_OF_ORDER}$`), "'From' must be on or before 'To'."],
];

/** A message in plain words: known phrasings rewritten, field names replaced by their labels, a full stop. */
export function plainWords(message: string, labels: Record<string, string> = {}): string {
  for (const [pattern, words] of PLAIN_WORDS) {
    const match = pattern.exec(message);
    if (match) return typeof words === "string" ? words : words(...match.slice(1));
  }
  let text = message;
  for (const [name, label] of Object.entries(labels)) text = text.replace(new RegExp(`\\b${name}\\b`, "g"), label);
  text = text.charAt(0).toUpperCase() + text.slice(1);
  return /[.!?)]$/.test(text) ? text : `${text}.`;
}

/**
 * Form values through the API's own request schema (the same zod object the HTTP route validates with), so
 * a form accepts exactly what the API accepts. A refusal is a ValidationError naming the field.
 */
export function parseWith<T>(
  schema: {
    safeParse(
      value: unknown,
    ): { success: true; data: T } | { success: false; error: { issues: { path: PropertyKey[]; message: string }[] } };
  },
  value: unknown,
): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    // A blank form field arrives as undefined: say so in words a person filling in a form understands.
    message: /received undefined/.test(issue.message) ? "is required" : issue.message,
  }));
  const first = details[0];
  throw new ValidationError(
    first ? `${first.path ? `${first.path}: ` : ""}${first.message}` : "Invalid input",
    "invalid_request",
    details,
  );
}
