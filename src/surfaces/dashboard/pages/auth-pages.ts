import { randomBytes } from "node:crypto";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { secretsEqual } from "../../../domain/access/api-key-secret.js";
import { SESSION_LIFETIME_MS } from "../../../domain/access/dashboard-sessions.js";
import { createRateLimiter } from "../../../platform/rate-limiter.js";
import { clearCookie, PRELOGIN_COOKIE, readCookie, SESSION_COOKIE, setCookie } from "../cookies.js";
import { ConflictError } from "../../../domain/kernel/errors.js";
import {
  type DashboardDeps,
  field,
  type FieldErrors,
  formFailure,
  formOf,
  placedFailure,
  seeOther,
  sendPage,
} from "../page-kit.js";
import { html, type HtmlValue } from "../html.js";
import { authPage, fieldError, flashBox, invalidAttributes, type Flash } from "../layout.js";

// Sign-in attempts per email, per process: 10 at once, then one every 6 seconds (always on).
const LOGIN_PER_EMAIL = { capacity: 10, perSecond: 1 / 6 };

/** Only a path on this site: never `//evil.example` or `/\evil.example` (no open redirect). */
function safeNext(next: string | undefined): string {
  if (!next || !next.startsWith("/") || next.startsWith("//") || next.includes("\\") || /[\u0000-\u001f]/.test(next))
    return "/";
  return next;
}

/** Login CSRF: the sign-in and sign-up forms carry a token that must match a cookie set with the form. */
function preloginToken(request: FastifyRequest, reply: FastifyReply): string {
  const existing = readCookie(request, PRELOGIN_COOKIE);
  if (existing) return existing;
  const token = randomBytes(24).toString("base64url");
  setCookie(reply, PRELOGIN_COOKIE, token, 60 * 60, "Strict");
  return token;
}

function preloginValid(request: FastifyRequest): boolean {
  const cookie = readCookie(request, PRELOGIN_COOKIE);
  const presented = formOf(request).get("_csrf");
  return !!cookie && !!presented && secretsEqual(cookie, presented);
}

const expiredForm: Flash = {
  kind: "error",
  message: "The form expired. It has been reloaded: please submit it again.",
};

function loginForm(token: string, values: { email?: string; next?: string }, flash?: Flash): string {
  return authPage(
    "Log in",
    html`${flash ? flashBox(flash) : ""}
<form class="stack" method="post" action="/login">
  <input type="hidden" name="_csrf" value="${token}">
  <input type="hidden" name="next" value="${values.next ?? "/"}">
  <div><label for="email">Email</label><input id="email" name="email" type="email" autocomplete="username" required value="${values.email ?? ""}" autofocus></div>
  <div><label for="password">Password</label><input id="password" name="password" type="password" autocomplete="current-password" required></div>
  <button type="submit">Log in</button>
</form>
<p>New here? <a href="/signup">Create an account</a></p>`,
  );
}

// Written out rather than with inputField: these inputs carry autocomplete, autofocus and minlength.
function signupForm(
  token: string,
  values: { company?: string; email?: string },
  flash?: Flash,
  errors: FieldErrors = {},
): string {
  const content: HtmlValue = html`${flash ? flashBox(flash) : ""}
<form class="stack" method="post" action="/signup">
  <input type="hidden" name="_csrf" value="${token}">
  <div><label for="company">Company name</label><input id="company" name="company" type="text" autocomplete="organization" required maxlength="200" value="${values.company ?? ""}" autofocus${invalidAttributes("company", errors.company)}>${fieldError("company", errors.company)}</div>
  <div><label for="email">Email</label><input id="email" name="email" type="email" autocomplete="email" required value="${values.email ?? ""}"${invalidAttributes("email", errors.email)}>${fieldError("email", errors.email)}</div>
  <div><label for="password">Password <span class="hint">(at least 8 characters)</span></label><input id="password" name="password" type="password" autocomplete="new-password" required minlength="8"${invalidAttributes("password", errors.password)}>${fieldError("password", errors.password)}</div>
  <button type="submit">Create account</button>
</form>
<p>Already have an account? <a href="/login">Log in</a></p>`;
  return authPage("Create your account", content);
}

/** A refused sign-up, each error beside its field (the access service names it); the password is never shown back. */
function signupFailure(error: unknown): { status: number; flash: Flash; fields: FieldErrors } {
  if (error instanceof ConflictError && error.code === "email_taken") {
    return placedFailure(409, {
      email: "An account with this email already exists: log in instead, or use another email.",
    });
  }
  return formFailure(error, (path) => (["company", "email", "password"].includes(path) ? path : undefined));
}

async function signIn(
  deps: DashboardDeps,
  reply: FastifyReply,
  user: Parameters<DashboardDeps["services"]["access"]["startSession"]>[0],
  next: string,
) {
  const { token } = await deps.services.access.startSession(user);
  setCookie(reply, SESSION_COOKIE, token, SESSION_LIFETIME_MS / 1000);
  clearCookie(reply, PRELOGIN_COOKIE);
  return seeOther(reply, safeNext(next));
}

export async function authPages(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const perEmail = createRateLimiter(LOGIN_PER_EMAIL);
  const perAddress = deps.authRateLimit ? createRateLimiter(deps.authRateLimit) : null;
  const open = { config: { dashboardPublic: true } };
  const tooMany = (
    reply: FastifyReply,
    token: string,
    values: { email: string; next: string },
    message: string,
    seconds: number,
  ) => {
    void reply.header("retry-after", String(seconds));
    return sendPage(reply, loginForm(token, values, { kind: "error", message }), 429);
  };

  app.get<{ Querystring: { next?: string } }>("/login", open, async (request, reply) => {
    return sendPage(reply, loginForm(preloginToken(request, reply), { next: safeNext(request.query.next) }));
  });

  app.post("/login", open, async (request, reply) => {
    const form = formOf(request);
    const email = field(form, "email") ?? "";
    const next = safeNext(field(form, "next"));
    const token = preloginToken(request, reply);
    if (!preloginValid(request)) return sendPage(reply, loginForm(token, { email, next }, expiredForm), 403);
    // Refused before the password is checked: argon2 is the expensive part of a guess.
    const wait = deps.authFailures?.refusal(request.ip, "dashboard");
    if (wait !== undefined) {
      return tooMany(
        reply,
        token,
        { email, next },
        `Too many failed sign-in attempts from this address. Try again in ${wait} s.`,
        wait,
      );
    }
    const verdict = perEmail.take(`email:${email.toLowerCase()}`);
    if (!verdict.allowed) {
      const seconds = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
      return tooMany(reply, token, { email, next }, `Too many sign-in attempts. Try again in ${seconds} s.`, seconds);
    }
    const user = await deps.services.access.verifyUserPassword(email, form.get("password") ?? "");
    if (!user) {
      deps.authFailures?.countFailure(request.ip);
      return sendPage(
        reply,
        loginForm(token, { email, next }, { kind: "error", message: "The email or the password is wrong." }),
        401,
      );
    }
    return signIn(deps, reply, user, next);
  });

  app.get("/signup", open, async (request, reply) => sendPage(reply, signupForm(preloginToken(request, reply), {})));

  app.post("/signup", open, async (request, reply) => {
    const form = formOf(request);
    const values = { company: field(form, "company") ?? "", email: field(form, "email") ?? "" };
    const token = preloginToken(request, reply);
    if (!preloginValid(request)) return sendPage(reply, signupForm(token, values, expiredForm), 403);
    const verdict = perAddress?.take(request.ip) ?? { allowed: true };
    if (!verdict.allowed) {
      return sendPage(
        reply,
        signupForm(token, values, {
          kind: "error",
          message: "Too many attempts from this address. Try again in a minute.",
        }),
        429,
      );
    }
    const password = form.get("password") ?? "";
    try {
      const user = await deps.services.access.signUp({ companyName: values.company, email: values.email, password });
      return await signIn(deps, reply, user, "/");
    } catch (error) {
      const { status, flash, fields } = signupFailure(error);
      return sendPage(reply, signupForm(token, values, flash, fields), status);
    }
  });

  // Signing out needs the session's CSRF token like any other POST (checked in dashboard-app.ts).
  app.post("/logout", async (request, reply) => {
    await deps.services.access.endSession(request.dashboard!.token);
    clearCookie(reply, SESSION_COOKIE);
    return seeOther(reply, "/login");
  });
}
