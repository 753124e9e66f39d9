import type { FastifyInstance } from "fastify";
import type { ApiKeyListing } from "../../../domain/access/api-keys.js";
import { ALL_SCOPES } from "../../../domain/kernel/actor.js";
import { parseDate } from "../../../domain/kernel/billing-period.js";
import { dateRefusal } from "../../../domain/kernel/time-range.js";
import { ValidationError } from "../../../domain/kernel/errors.js";
import {
  type DashboardDeps,
  field,
  type FieldErrors,
  formFailure,
  formOf,
  placedFailure,
  seeOther,
  sendPage,
  type Viewer,
  viewerOf,
} from "../page-kit.js";
import { html, type SafeHtml } from "../html.js";
import {
  badge,
  csrfField,
  dataTable,
  doneFlash,
  emptyState,
  fieldError,
  inputField,
  invalidAttributes,
  page,
  settingsNav,
  when,
  type Flash,
} from "../layout.js";

const DONE: Record<string, Flash> = {
  revoked: { kind: "ok", message: "The key is revoked: requests with it now answer 401." },
};

const keyState = (key: ApiKeyListing): SafeHtml =>
  badge(key.state, key.state === "active" ? "ok" : key.state === "revoked" ? "bad" : "warn");

interface KeyFormValues {
  name?: string;
  scopes?: string[];
  expires_on?: string | undefined;
}

function createForm(viewer: Viewer, values: KeyFormValues = {}, errors: FieldErrors = {}): SafeHtml {
  return html`<section class="card" aria-labelledby="new-key">
<h2 id="new-key">Create an API key</h2>
<form class="stack" method="post" action="/settings/api-keys">
  ${csrfField(viewer.ctx)}
  ${inputField({ id: "key-name", name: "name", label: "Name", maxlength: 200, required: true, placeholder: "Production server", value: values.name, error: errors.name })}
  <fieldset id="key-scopes"${invalidAttributes("key-scopes", errors.scopes)}>
    <legend>Scopes <span class="hint">(leave all unchecked for a key with every scope)</span></legend>
    ${ALL_SCOPES.map((scope) => html`<label><input type="checkbox" name="scopes" value="${scope}"${values.scopes?.includes(scope) ? html` checked` : ""}> <code>${scope}</code></label>`)}
    ${fieldError("key-scopes", errors.scopes)}
  </fieldset>
  ${inputField({ id: "key-expires", name: "expires_on", label: "Expires on", hint: "(optional, UTC midnight)", type: "date", value: values.expires_on, error: errors.expires_on })}
  <div><button type="submit">Create key</button></div>
</form>
</section>`;
}

/** The create form's failure, each error beside its field, in the words of someone creating a key. */
function keyFailure(error: unknown, values: KeyFormValues): { status: number; flash: Flash; fields: FieldErrors } {
  const placed = (fields: FieldErrors) => placedFailure(400, fields);
  if (error instanceof ValidationError && error.code === "invalid_scope") {
    const unknown = (values.scopes ?? []).filter((scope) => !(ALL_SCOPES as readonly string[]).includes(scope));
    return placed({
      scopes:
        unknown.length > 0
          ? `${unknown.map((scope) => `“${scope}”`).join(", ")} ${unknown.length === 1 ? "is not a scope" : "are not scopes"}: tick only the scopes listed.`
          : "Tick the scopes the key may use, or none for a key with every scope.",
    });
  }
  if (error instanceof ValidationError && error.details?.[0]?.message === "must be in the future") {
    return placed({
      expires_on: "Choose a day after today: the key stops working at the start of that day (midnight UTC).",
    });
  }
  // The access service names the field: `name`, or `expires_at` for the form's `expires_on`.
  return formFailure(error, (path) =>
    path === "expires_at" ? "expires_on" : ["name", "scopes", "expires_on"].includes(path) ? path : undefined,
  );
}

function keysTable(keys: ApiKeyListing[]): SafeHtml {
  if (keys.length === 0) return emptyState("No API keys yet. Create one above to call the API.");
  return dataTable(
    "API keys",
    [
      { header: "Name", cell: (k) => k.name ?? "—" },
      { header: "Key", cell: (k) => html`<code>${k.prefix}…</code>` },
      { header: "Scopes", cell: (k) => (k.scopes.length === ALL_SCOPES.length ? "all" : k.scopes.join(", ")) },
      { header: "State", cell: (k) => keyState(k) },
      { header: "Created", cell: (k) => when(k.created_at) },
      { header: "Last used", cell: (k) => (k.last_used_at ? when(k.last_used_at) : "never") },
      { header: "Expires", cell: (k) => (k.expires_at ? when(k.expires_at) : "never") },
      {
        header: "Actions",
        cell: (k) =>
          k.revoked_at
            ? ""
            : html`<a href="/settings/api-keys/${k.id}/revoke" aria-label="Revoke ${k.name ?? k.prefix}">Revoke</a>`,
      },
    ],
    keys,
  );
}

async function listPage(deps: DashboardDeps, viewer: Viewer, top: SafeHtml | string, flash?: Flash): Promise<string> {
  const keys = await deps.services.access.listApiKeys(viewer.session.actor);
  return page(viewer.ctx, "API keys", html`${settingsNav(viewer.ctx.path)}${top}<h2>Your keys</h2>${keysTable(keys)}`, {
    flash,
  });
}

export async function apiKeyPages(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get("/settings", async (_request, reply) => seeOther(reply, "/settings/api-keys"));

  app.get<{ Querystring: { done?: string } }>("/settings/api-keys", async (request, reply) => {
    const viewer = viewerOf(request);
    return sendPage(reply, await listPage(deps, viewer, createForm(viewer), doneFlash(DONE, request.query.done)));
  });

  app.post("/settings/api-keys", async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const values = {
      name: field(form, "name") ?? "",
      scopes: form.getAll("scopes"),
      expires_on: field(form, "expires_on"),
    };
    try {
      // parseDate refuses a date that does not exist (2026-02-30), which Date would move to the next month.
      const expiresAt = values.expires_on === undefined ? undefined : parseDate(values.expires_on);
      if (values.expires_on !== undefined && expiresAt === undefined) {
        throw new ValidationError("expires_on must be a date (YYYY-MM-DD)", "invalid_expires_at", [
          { path: "expires_on", message: "Invalid date" },
        ]);
      }
      // A real date, but outside the dates the service keeps (time-range.ts).
      const outOfRange = values.expires_on === undefined ? undefined : dateRefusal(values.expires_on);
      if (outOfRange !== undefined) {
        throw new ValidationError(`expires_on ${outOfRange}`, "invalid_expires_at", [
          { path: "expires_on", message: `The date ${outOfRange}.` },
        ]);
      }
      const created = await deps.services.access.createOwnApiKey(viewer.session.actor, {
        name: values.name,
        scopes: values.scopes.length > 0 ? values.scopes : undefined,
        expiresAt,
      });
      // The key is shown in this response only (never in a URL, never again): no redirect here.
      const shown = html`<section class="card" aria-labelledby="key-shown">
<h2 id="key-shown">Your new key “${created.name ?? created.prefix}”</h2>
<p class="alert warn" role="status">Copy it now: it is shown only once. We store only its hash.</p>
<div class="secret"><code id="new-api-key">${created.key}</code><button type="button" class="secondary" data-copy="new-api-key">Copy key</button></div>
<p class="hint">Send it as <code>Authorization: Bearer &lt;key&gt;</code> or <code>X-Api-Key: &lt;key&gt;</code>.</p>
</section>`;
      return sendPage(reply, await listPage(deps, viewer, html`${shown}${createForm(viewer)}`));
    } catch (error) {
      const { status, flash, fields } = keyFailure(error, values);
      return sendPage(reply, await listPage(deps, viewer, createForm(viewer, values, fields), flash), status);
    }
  });

  app.get<{ Params: { id: string } }>("/settings/api-keys/:id/revoke", async (request, reply) => {
    const viewer = viewerOf(request);
    const key = await deps.services.access.getOwnApiKey(viewer.session.actor, request.params.id);
    if (key.revoked_at)
      return sendPage(
        reply,
        page(
          viewer.ctx,
          "Already revoked",
          html`<p class="alert error" role="alert">This key is already revoked.</p><p><a href="/settings/api-keys">Back to API keys</a></p>`,
        ),
        409,
      );
    return sendPage(
      reply,
      page(
        viewer.ctx,
        "Revoke API key",
        html`<div class="card"><p>Revoke <strong>${key.name ?? "unnamed key"}</strong> (<code>${key.prefix}…</code>)? Every request with it will answer 401 at once. This cannot be undone.</p>
<form method="post" action="/settings/api-keys/${key.id}/revoke" class="actions">${csrfField(viewer.ctx)}<button type="submit" class="danger">Revoke key</button><a class="button secondary" href="/settings/api-keys">Cancel</a></form></div>`,
      ),
    );
  });

  app.post<{ Params: { id: string } }>("/settings/api-keys/:id/revoke", async (request, reply) => {
    const viewer = viewerOf(request);
    try {
      await deps.services.access.revokeOwnApiKey(viewer.session.actor, request.params.id);
    } catch (error) {
      const { status, flash } = formFailure(error);
      return sendPage(reply, await listPage(deps, viewer, createForm(viewer), flash), status);
    }
    return seeOther(reply, "/settings/api-keys?done=revoked");
  });
}
