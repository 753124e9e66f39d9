// The webhook endpoints' list (docs/dashboard.md, "Webhooks"): every endpoint of the company, and the form that
// adds one (the API's createEndpointInput and the same service call), whose signing secret is shown in the
// answer to the form only. An endpoint's own page is webhook-endpoint-pages.ts, registered from here.
import type { FastifyInstance } from "fastify";
import { DEFAULT_EVENT_TYPES } from "../../../domain/webhooks/outbox.js";
import { createEndpointInput, type Endpoint } from "../../../domain/webhooks/webhook-schemas.js";
import {
  type DashboardDeps,
  type FieldErrors,
  formOf,
  parseWith,
  sendPage,
  type Viewer,
  viewerOf,
} from "../page-kit.js";
import { html, type HtmlValue, type SafeHtml } from "../html.js";
import { csrfField, dataTable, doneFlash, emptyState, page, when, type Flash } from "../layout.js";
import { webhookEndpointPages } from "./webhook-endpoint-pages.js";
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

function createForm(viewer: Viewer, values: EndpointFormValues = {}, errors: FieldErrors = {}): SafeHtml {
  return html`<section class="card" aria-labelledby="new-endpoint">
<h2 id="new-endpoint">Add an endpoint</h2>
<form class="stack" method="post" action="/webhooks">
  ${csrfField(viewer.ctx)}
  ${endpointFields("endpoint", values, DEFAULT_EVENT_TYPES, errors)}
  <div><button type="submit">Add endpoint</button></div>
</form>
</section>`;
}

function endpointsTable(endpoints: Endpoint[]): SafeHtml {
  if (endpoints.length === 0)
    return emptyState("No webhook endpoints yet. Add one above to receive events as they happen.");
  return dataTable(
    "Webhook endpoints",
    [
      { header: "URL", cell: (e) => html`<a href="/webhooks/${e.id}"><code>${e.url}</code></a>` },
      { header: "Description", cell: (e) => e.description ?? "—" },
      { header: "Events", cell: (e) => eventList(e.events) },
      { header: "Status", cell: (e) => statusBadge(e) },
      { header: "Created", cell: (e) => when(e.created_at) },
    ],
    endpoints,
  );
}

async function listPage(deps: DashboardDeps, viewer: Viewer, top: HtmlValue, flash?: Flash): Promise<string> {
  const endpoints = await deps.services.webhooks.list(viewer.session.actor);
  return page(viewer.ctx, "Webhooks", html`${top}<h2>Endpoints</h2>${endpointsTable(endpoints)}`, { flash });
}

export async function webhookPages(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  const { webhooks } = deps.services;

  app.get<{ Querystring: { done?: string } }>("/webhooks", async (request, reply) => {
    const viewer = viewerOf(request);
    return sendPage(reply, await listPage(deps, viewer, createForm(viewer), doneFlash(DONE, request.query.done)));
  });

  app.post("/webhooks", async (request, reply) => {
    const viewer = viewerOf(request);
    const values = endpointValues(formOf(request));
    try {
      const input = parseWith(createEndpointInput, {
        url: values.url,
        description: values.description,
        events: values.events && values.events.length > 0 ? values.events : undefined,
      });
      const endpoint = await webhooks.create(viewer.session.actor, input);
      // The secret is shown in this response only: no redirect here (a URL would keep it in history and logs).
      return sendPage(
        reply,
        await listPage(deps, viewer, html`${secretOnce(endpoint, "Endpoint added")}${createForm(viewer)}`),
      );
    } catch (error) {
      const { status, flash, fields } = endpointFailure(error);
      return sendPage(reply, await listPage(deps, viewer, createForm(viewer, values, fields), flash), status);
    }
  });

  await webhookEndpointPages(app, deps);
}
