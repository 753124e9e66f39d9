import type { FastifyInstance } from "fastify";
import type { ApiKeyListing } from "../../../domain/access/access-service.js";
import { ALL_SCOPES } from "../../../domain/kernel/actor.js";
import { ValidationError } from "../../../domain/kernel/errors.js";
import { field, formFailure, formOf, seeOther, sendPage, viewerOf, type DashboardDeps, type Viewer } from "../page-kit.js";
import { html, type SafeHtml } from "../html.js";
import { badge, csrfField, dataTable, doneFlash, emptyState, page, when, type Flash } from "../layout.js";

const DONE: Record<string, Flash> = {
  revoked: { kind: "ok", message: "The key is revoked: requests with it now answer 401." },
};

const keyState = (key: ApiKeyListing): SafeHtml => badge(key.state, key.state === "active" ? "ok" : key.state === "revoked" ? "bad" : "warn");

function createForm(viewer: Viewer, values: { name?: string; scopes?: string[] } = {}): SafeHtml {
  return html`<section class="card" aria-labelledby="new-key">
<h2 id="new-key">Create an API key</h2>
<form class="stack" method="post" action="/settings/api-keys">
  ${csrfField(viewer.ctx)}
  <div><label for="key-name">Name</label><input id="key-name" name="name" type="text" maxlength="200" required placeholder="Production server" value="${values.name ?? ""}"></div>
  <fieldset>
    <legend>Scopes <span class="hint">(leave all unchecked for a key with every scope)</span></legend>
    ${ALL_SCOPES.map((scope) => html`<label><input type="checkbox" name="scopes" value="${scope}"${values.scopes?.includes(scope) ? html` checked` : ""}> <code>${scope}</code></label>`)}
  </fieldset>
  <div><label for="key-expires">Expires on <span class="hint">(optional, UTC midnight)</span></label><input id="key-expires" name="expires_on" type="date"></div>
  <div><button type="submit">Create key</button></div>
</form>
</section>`;
}

function keysTable(keys: ApiKeyListing[]): SafeHtml {
  if (keys.length === 0) return emptyState("No API keys yet. Create one above to call the API.");
  return dataTable("API keys", [
    { header: "Name", cell: (k) => k.name ?? "—" },
    { header: "Key", cell: (k) => html`<code>${k.prefix}…</code>` },
    { header: "Scopes", cell: (k) => (k.scopes.length === ALL_SCOPES.length ? "all" : k.scopes.join(", ")) },
    { header: "State", cell: (k) => keyState(k) },
    { header: "Created", cell: (k) => when(k.created_at) },
    { header: "Last used", cell: (k) => (k.last_used_at ? when(k.last_used_at) : "never") },
    { header: "Expires", cell: (k) => (k.expires_at ? when(k.expires_at) : "never") },
    {
      header: "Actions",
      cell: (k) => (k.revoked_at ? "" : html`<a href="/settings/api-keys/${k.id}/revoke" aria-label="Revoke ${k.name ?? k.prefix}">Revoke</a>`),
    },
  ], keys);
}

async function listPage(deps: DashboardDeps, viewer: Viewer, top: SafeHtml | string, flash?: Flash): Promise<string> {
  const keys = await deps.services.access.listApiKeys(viewer.session.actor);
  return page(viewer.ctx, "API keys", html`${top}<h2>Your keys</h2>${keysTable(keys)}`, { flash });
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
    const values = { name: field(form, "name") ?? "", scopes: form.getAll("scopes") };
    try {
      const expiresOn = field(form, "expires_on");
      if (expiresOn !== undefined && !/^\d{4}-\d{2}-\d{2}$/.test(expiresOn)) throw new ValidationError("expires_on must be a date (YYYY-MM-DD)", "invalid_expires_at");
      const created = await deps.services.access.createOwnApiKey(viewer.session.actor, {
        name: values.name,
        scopes: values.scopes.length > 0 ? values.scopes : undefined,
        expiresAt: expiresOn ? new Date(`${expiresOn}T00:00:00Z`) : undefined,
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
      const { status, flash } = formFailure(error);
      return sendPage(reply, await listPage(deps, viewer, createForm(viewer, values), flash), status);
    }
  });

  app.get<{ Params: { id: string } }>("/settings/api-keys/:id/revoke", async (request, reply) => {
    const viewer = viewerOf(request);
    const key = await deps.services.access.getOwnApiKey(viewer.session.actor, request.params.id);
    if (key.revoked_at) return sendPage(reply, page(viewer.ctx, "Already revoked", html`<p class="alert error" role="alert">This key is already revoked.</p><p><a href="/settings/api-keys">Back to API keys</a></p>`), 409);
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
