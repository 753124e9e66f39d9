// A webhook endpoint's page (docs/dashboard.md, "Webhooks"): its facts, the edit form, enabling and disabling
// it, a test event, rotating its secret and deleting it (each destructive action behind a confirmation page),
// its recent deliveries, and one delivery's page with its payload and a resend. The API's operations, through
// its own schemas and the same service calls. Registered by webhook-pages.ts.
import type { FastifyInstance } from "fastify";
import { NotFoundError } from "../../../domain/kernel/errors.js";
import { DEFAULT_EVENT_TYPES, EVENT_TYPES } from "../../../domain/webhooks/outbox.js";
import {
  testEventInput,
  updateEndpointInput,
  type Delivery,
  type Endpoint,
} from "../../../domain/webhooks/webhook-schemas.js";
import {
  type DashboardDeps,
  field,
  type FieldErrors,
  formFailure,
  formOf,
  parseWith,
  seeOther,
  sendPage,
  type Viewer,
  viewerOf,
} from "../page-kit.js";
import { html, type HtmlValue, type SafeHtml } from "../html.js";
import { deliveryStatusBadge } from "../format.js";
import {
  badge,
  csrfField,
  dataTable,
  decimal,
  doneFlash,
  emptyState,
  fieldError,
  invalidAttributes,
  link,
  page,
  when,
  type Flash,
} from "../layout.js";
import { stringifyJson } from "../../../platform/exact-json.js";
import {
  DONE,
  type EndpointFormValues,
  endpointFailure,
  endpointFields,
  endpointValues,
  eventList,
  secretOnce,
  statusBadge,
} from "./webhook-page-parts.js";

function editForm(viewer: Viewer, endpoint: Endpoint, values?: EndpointFormValues, errors: FieldErrors = {}): SafeHtml {
  const shown: EndpointFormValues = values ?? {
    url: endpoint.url,
    description: endpoint.description ?? "",
    events: endpoint.events,
    enabled: endpoint.status === "enabled" ? "true" : "false",
  };
  const enabled = shown.enabled !== "false";
  return html`<section class="card" aria-labelledby="edit-endpoint">
<h2 id="edit-endpoint">Edit</h2>
<form class="stack" method="post" action="/webhooks/${endpoint.id}">
  ${csrfField(viewer.ctx)}
  ${endpointFields("edit", shown, endpoint.events, errors)}
  <fieldset>
    <legend>Status</legend>
    <label><input type="radio" name="enabled" value="true"${enabled ? html` checked` : ""}> Enabled</label>
    <label><input type="radio" name="enabled" value="false"${enabled ? "" : html` checked`}> Disabled <span class="hint">(stops pending retries)</span></label>
  </fieldset>
  <div><button type="submit">Save changes</button></div>
</form>
</section>`;
}

function deliveriesTable(endpoint: Endpoint, deliveries: Delivery[]): SafeHtml {
  if (deliveries.length === 0)
    return emptyState(
      "No deliveries yet. Events the endpoint subscribes to appear here once they happen, or send a test event above.",
    );
  return dataTable(
    `Recent deliveries to ${endpoint.url}`,
    [
      {
        header: "Event",
        cell: (d) => html`<a href="/webhooks/${endpoint.id}/deliveries/${d.id}"><code>${d.event_type}</code></a>`,
      },
      { header: "Event id", cell: (d) => html`<code>${d.event_id}</code>` },
      { header: "Kind", cell: (d) => (d.test ? badge("test") : "live") },
      { header: "Status", cell: (d) => deliveryStatusBadge(d) },
      { header: "Attempts", cell: (d) => decimal(d.attempts), numeric: true },
      { header: "Last answer", cell: (d) => lastAnswer(d) },
      { header: "Created", cell: (d) => when(d.created_at) },
      { header: "Delivered", cell: (d) => when(d.delivered_at) },
    ],
    deliveries,
  );
}

function lastAnswer(delivery: Delivery): HtmlValue {
  if (delivery.last_status_code !== null && delivery.last_error)
    return html`HTTP ${delivery.last_status_code} · ${delivery.last_error}`;
  if (delivery.last_status_code !== null) return `HTTP ${delivery.last_status_code}`;
  return delivery.last_error ?? "—";
}

/** The outcome of a test or a resend, read back from the stored delivery (the redirect carries only its id). */
function outcomeFlash(delivery: Delivery, what: "test" | "resend"): Flash {
  const sent = what === "test" ? "Test event" : "Event sent again";
  if (delivery.status === "succeeded") {
    return { kind: "ok", message: `${sent}: the receiver answered ${delivery.last_status_code ?? "with success"}.` };
  }
  return {
    kind: "error",
    message: `${sent}, but the receiver did not accept it: ${delivery.last_error ?? "no answer"}.`,
  };
}

async function endpointPage(
  deps: DashboardDeps,
  viewer: Viewer,
  endpoint: Endpoint,
  options: {
    top?: HtmlValue;
    flash?: Flash | undefined;
    values?: EndpointFormValues;
    errors?: FieldErrors;
    test?: { type?: string | undefined; error?: string | undefined };
  } = {},
): Promise<string> {
  const deliveries = await deps.services.webhooks.recentDeliveries(viewer.session.actor, endpoint.id);
  const enabled = endpoint.status === "enabled";
  const facts = html`<div class="card"><dl class="facts">
<dt>URL</dt><dd><code>${endpoint.url}</code></dd>
<dt>Description</dt><dd>${endpoint.description ?? "—"}</dd>
<dt>Events</dt><dd>${eventList(endpoint.events)}</dd>
<dt>Status</dt><dd>${statusBadge(endpoint)}</dd>
<dt>Id</dt><dd><code>${endpoint.id}</code></dd>
<dt>Created</dt><dd>${when(endpoint.created_at)}</dd>
</dl>
<div class="actions">
  <form method="post" action="/webhooks/${endpoint.id}/status">${csrfField(viewer.ctx)}<input type="hidden" name="enabled" value="${enabled ? "false" : "true"}"><button type="submit" class="secondary">${enabled ? "Disable endpoint" : "Enable endpoint"}</button></form>
  <a class="button secondary" href="/webhooks/${endpoint.id}/rotate">Rotate secret</a>
  <a class="button secondary" href="/webhooks/${endpoint.id}/delete">Delete endpoint</a>
</div></div>`;
  const test = html`<section class="card" aria-labelledby="send-test">
<h2 id="send-test">Send a test event</h2>
<form class="inline" method="post" action="/webhooks/${endpoint.id}/test">
  ${csrfField(viewer.ctx)}
  <div class="field"><label for="test-type">Event type</label><select id="test-type" name="type"${invalidAttributes("test-type", options.test?.error)}>${EVENT_TYPES.map(
    (type) => html`<option value="${type}"${type === options.test?.type ? html` selected` : ""}>${type}</option>`,
  )}</select>${fieldError("test-type", options.test?.error)}</div>
  <button type="submit">Send test event</button>
</form>
<p class="hint">Sends signed sample data marked <code>"test": true</code>, once, now; it is recorded below.</p>
</section>`;
  const content = html`<p><a href="/webhooks">All webhook endpoints</a></p>${options.top ?? ""}${facts}${test}${editForm(viewer, endpoint, options.values, options.errors)}
<h2>Recent deliveries</h2>${deliveriesTable(endpoint, deliveries)}`;
  return page(viewer.ctx, "Webhook endpoint", content, { flash: options.flash });
}

/** A delivery of this endpoint; a delivery of another endpoint (or company) is not found. */
async function deliveryOf(
  deps: DashboardDeps,
  viewer: Viewer,
  endpoint: Endpoint,
  deliveryId: string,
): Promise<Delivery> {
  const delivery = await deps.services.webhooks.getDelivery(viewer.session.actor, deliveryId);
  if (delivery.endpoint_id !== endpoint.id) throw new NotFoundError("webhook_delivery");
  return delivery;
}

function deliveryPage(viewer: Viewer, endpoint: Endpoint, delivery: Delivery, flash?: Flash): string {
  const facts = html`<div class="card"><dl class="facts">
<dt>Endpoint</dt><dd><a href="/webhooks/${endpoint.id}"><code>${endpoint.url}</code></a></dd>
<dt>Event type</dt><dd><code>${delivery.event_type}</code></dd>
<dt>Event id</dt><dd><code>${delivery.event_id}</code></dd>
<dt>Kind</dt><dd>${delivery.test ? badge("test") : "live"}</dd>
<dt>Status</dt><dd>${deliveryStatusBadge(delivery)}</dd>
<dt>Attempts</dt><dd>${decimal(delivery.attempts)}</dd>
<dt>Last answer</dt><dd>${lastAnswer(delivery)}</dd>
<dt>Next attempt</dt><dd>${delivery.next_attempt_at ? when(delivery.next_attempt_at) : "none scheduled"}</dd>
<dt>Created</dt><dd>${when(delivery.created_at)}</dd>
<dt>Delivered</dt><dd>${when(delivery.delivered_at)}</dd>
<dt>Delivery id</dt><dd><code>${delivery.id}</code></dd>
</dl>
<form method="post" action="/webhooks/${endpoint.id}/deliveries/${delivery.id}/resend" class="actions">${csrfField(viewer.ctx)}<button type="submit">Resend</button><span class="hint">Sends the same event (same id and body) once more, now.</span></form>
</div>`;
  const payload = html`<h2 id="payload-heading">Payload</h2>
<div class="actions"><button type="button" class="secondary" data-copy="delivery-payload">Copy payload</button></div>
<pre class="payload" id="delivery-payload" tabindex="0" aria-labelledby="payload-heading">${stringifyJson(delivery.payload, 2)}</pre>`;
  return page(
    viewer.ctx,
    "Webhook delivery",
    html`<p><a href="/webhooks/${endpoint.id}">Back to the endpoint</a></p>${facts}${payload}`,
    { flash },
  );
}

function confirmPage(
  viewer: Viewer,
  title: string,
  endpoint: Endpoint,
  question: HtmlValue,
  action: string,
  button: string,
): string {
  return page(
    viewer.ctx,
    title,
    html`<div class="card"><p>${question}</p>
<form method="post" action="${action}" class="actions">${csrfField(viewer.ctx)}<button type="submit" class="danger">${button}</button><a class="button secondary" href="/webhooks/${endpoint.id}">Cancel</a></form></div>`,
  );
}

/** The routes of an endpoint's page, its actions and its deliveries, under /webhooks/:id. */
export async function webhookEndpointPages(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const { webhooks } = deps.services;

  app.get<{ Params: { id: string }; Querystring: { done?: string; delivery?: string } }>(
    "/webhooks/:id",
    async (request, reply) => {
      const viewer = viewerOf(request);
      const endpoint = await webhooks.get(viewer.session.actor, request.params.id);
      let flash = doneFlash(DONE, request.query.done);
      if (request.query.done === "test" && request.query.delivery) {
        // A stale or foreign id in the address only loses the flash, not the page.
        const delivery = await deliveryOf(deps, viewer, endpoint, request.query.delivery).catch((error: unknown) => {
          if (error instanceof NotFoundError) return undefined;
          throw error;
        });
        if (delivery) flash = outcomeFlash(delivery, "test");
      }
      return sendPage(reply, await endpointPage(deps, viewer, endpoint, { flash }));
    },
  );

  app.post<{ Params: { id: string } }>("/webhooks/:id", async (request, reply) => {
    const viewer = viewerOf(request);
    const endpoint = await webhooks.get(viewer.session.actor, request.params.id);
    const values = endpointValues(formOf(request));
    try {
      const input = parseWith(updateEndpointInput, {
        url: values.url,
        // A cleared description removes it; no event type checked subscribes to the default ones, as on creation.
        description: values.description ?? null,
        events: values.events && values.events.length > 0 ? values.events : [...DEFAULT_EVENT_TYPES],
        enabled: values.enabled === undefined ? undefined : values.enabled === "true",
      });
      await webhooks.update(viewer.session.actor, endpoint.id, input);
      return seeOther(reply, `/webhooks/${endpoint.id}?done=updated`);
    } catch (error) {
      const { status, flash, fields } = endpointFailure(error);
      return sendPage(reply, await endpointPage(deps, viewer, endpoint, { flash, values, errors: fields }), status);
    }
  });

  app.post<{ Params: { id: string } }>("/webhooks/:id/status", async (request, reply) => {
    const viewer = viewerOf(request);
    const endpoint = await webhooks.get(viewer.session.actor, request.params.id);
    try {
      const enabled = field(formOf(request), "enabled") === "true";
      await webhooks.update(viewer.session.actor, endpoint.id, { enabled });
      return seeOther(reply, `/webhooks/${endpoint.id}?done=${enabled ? "enabled" : "disabled"}`);
    } catch (error) {
      const { status, flash } = formFailure(error);
      return sendPage(reply, await endpointPage(deps, viewer, endpoint, { flash }), status);
    }
  });

  /** GET /webhooks/:id/<action>: the page that asks before a POST to the same path does it. */
  const confirmRoute = (action: string, title: string, button: string, question: (endpoint: Endpoint) => HtmlValue) =>
    app.get<{ Params: { id: string } }>(`/webhooks/:id/${action}`, async (request, reply) => {
      const viewer = viewerOf(request);
      const endpoint = await webhooks.get(viewer.session.actor, request.params.id);
      return sendPage(
        reply,
        confirmPage(viewer, title, endpoint, question(endpoint), `/webhooks/${endpoint.id}/${action}`, button),
      );
    });

  confirmRoute(
    "rotate",
    "Rotate signing secret",
    "Rotate secret",
    (endpoint) =>
      html`Replace the signing secret of <code>${endpoint.url}</code>? The current secret stops signing at once: deliveries from now on are signed with the new one, so update your receiver right after.`,
  );

  app.post<{ Params: { id: string } }>("/webhooks/:id/rotate", async (request, reply) => {
    const viewer = viewerOf(request);
    const rotated = await webhooks.rotateSecret(viewer.session.actor, request.params.id);
    // Shown in this response only, like a new endpoint's secret.
    return sendPage(
      reply,
      await endpointPage(deps, viewer, rotated, { top: secretOnce(rotated, "New signing secret") }),
    );
  });

  confirmRoute(
    "delete",
    "Delete endpoint",
    "Delete endpoint",
    (endpoint) =>
      html`Delete the endpoint <code>${endpoint.url}</code>? Nothing more is sent to it, and its delivery history goes with it. This cannot be undone.`,
  );

  app.post<{ Params: { id: string } }>("/webhooks/:id/delete", async (request, reply) => {
    const viewer = viewerOf(request);
    await webhooks.remove(viewer.session.actor, request.params.id);
    return seeOther(reply, "/webhooks?done=deleted");
  });

  app.post<{ Params: { id: string } }>("/webhooks/:id/test", async (request, reply) => {
    const viewer = viewerOf(request);
    const endpoint = await webhooks.get(viewer.session.actor, request.params.id);
    const chosen = field(formOf(request), "type");
    try {
      const { type } = parseWith(testEventInput, { type: chosen });
      const result = await webhooks.sendTest(viewer.session.actor, endpoint.id, type);
      return seeOther(reply, link(`/webhooks/${endpoint.id}`, { done: "test", delivery: result.id }));
    } catch (error) {
      const { status, flash, fields } = formFailure(error, (path) => (path === "type" ? path : undefined));
      return sendPage(
        reply,
        await endpointPage(deps, viewer, endpoint, { flash, test: { type: chosen, error: fields.type } }),
        status,
      );
    }
  });

  app.get<{ Params: { id: string; deliveryId: string }; Querystring: { done?: string } }>(
    "/webhooks/:id/deliveries/:deliveryId",
    async (request, reply) => {
      const viewer = viewerOf(request);
      const endpoint = await webhooks.get(viewer.session.actor, request.params.id);
      const delivery = await deliveryOf(deps, viewer, endpoint, request.params.deliveryId);
      return sendPage(
        reply,
        deliveryPage(
          viewer,
          endpoint,
          delivery,
          request.query.done === "resent" ? outcomeFlash(delivery, "resend") : undefined,
        ),
      );
    },
  );

  app.post<{ Params: { id: string; deliveryId: string } }>(
    "/webhooks/:id/deliveries/:deliveryId/resend",
    async (request, reply) => {
      const viewer = viewerOf(request);
      const endpoint = await webhooks.get(viewer.session.actor, request.params.id);
      const delivery = await deliveryOf(deps, viewer, endpoint, request.params.deliveryId);
      try {
        await webhooks.resend(viewer.session.actor, delivery.id);
        return seeOther(reply, `/webhooks/${endpoint.id}/deliveries/${delivery.id}?done=resent`);
      } catch (error) {
        const { status, flash } = formFailure(error);
        return sendPage(reply, deliveryPage(viewer, endpoint, delivery, flash), status);
      }
    },
  );
}
