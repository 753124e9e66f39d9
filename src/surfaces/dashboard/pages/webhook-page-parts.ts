// What the webhook pages share (docs/dashboard.md, "Webhooks"): the endpoint form's fields, read and refused as
// the API's own schemas refuse them (a refused URL in plain words), an endpoint's status and event types as
// shown, the signing secret shown once, and the flashes of `?done=`. The list is webhook-pages.ts, an
// endpoint's page and its deliveries webhook-endpoint-pages.ts.
import { ValidationError } from "../../../domain/kernel/errors.js";
import { EVENT_TYPES } from "../../../domain/webhooks/outbox.js";
import { ALLOW_PRIVATE_HINT, refusedAsLocal } from "../../../domain/webhooks/endpoint-urls.js";
import type { Endpoint } from "../../../domain/webhooks/webhook-schemas.js";
import { field, type FieldErrors, type FormBody, formFailure, placedFailure, plainWords } from "../page-kit.js";
import { html, type SafeHtml } from "../html.js";
import { badge, fieldError, inputField, invalidAttributes, type Flash } from "../layout.js";

export const DONE: Record<string, Flash> = {
  updated: { kind: "ok", message: "Endpoint saved." },
  enabled: { kind: "ok", message: "Endpoint enabled: new events are delivered to it again." },
  disabled: { kind: "ok", message: "Endpoint disabled: nothing more is sent to it, and its pending retries stopped." },
  deleted: { kind: "ok", message: "Endpoint deleted." },
};

export interface EndpointFormValues {
  url?: string;
  description?: string;
  events?: string[];
  enabled?: string;
}

/**
 * The form's checked event types; none checked means the API's default when `events` is left out
 * (DEFAULT_EVENT_TYPES: customer.created and contract.created; invoice events are opt-in).
 */
function eventsOf(form: FormBody): string[] {
  return form
    .getAll("events")
    .map((value) => value.trim())
    .filter((value) => value !== "");
}

export function endpointValues(form: FormBody): EndpointFormValues {
  const values: EndpointFormValues = { events: eventsOf(form) };
  const url = field(form, "url");
  const description = field(form, "description");
  const enabled = field(form, "enabled");
  if (url !== undefined) values.url = url;
  if (description !== undefined) values.description = description;
  if (enabled !== undefined) values.enabled = enabled;
  return values;
}

export const statusBadge = (endpoint: Endpoint) =>
  endpoint.status === "enabled" ? badge("enabled", "ok") : badge("disabled", "bad");

export const eventList = (events: readonly string[]): SafeHtml =>
  html`${events.map((type, i) => html`${i > 0 ? ", " : ""}<code>${type}</code>`)}`;

/** The url, description and event-type fields shared by the create and edit forms. */
export function endpointFields(
  idPrefix: string,
  values: EndpointFormValues,
  checkedByDefault: readonly string[],
  errors: FieldErrors,
): SafeHtml {
  const checked = values.events ?? checkedByDefault;
  const eventsId = `${idPrefix}-events`;
  return html`${inputField({
    id: `${idPrefix}-url`,
    name: "url",
    label: "URL",
    hint: "(https://, reachable on the public internet)",
    type: "url",
    inputmode: "url",
    maxlength: 2048,
    required: true,
    placeholder: "https://example.com/webhooks",
    value: values.url,
    error: errors.url,
  })}
  ${inputField({ id: `${idPrefix}-description`, name: "description", label: "Description", hint: "(optional)", maxlength: 500, value: values.description, error: errors.description })}
  <fieldset id="${eventsId}"${invalidAttributes(eventsId, errors.events)}>
    <legend>Event types <span class="hint">(none checked: customer.created and contract.created; invoice events are opt-in)</span></legend>
    ${EVENT_TYPES.map((type) => html`<label><input type="checkbox" name="events" value="${type}"${checked.includes(type) ? html` checked` : ""}> <code>${type}</code></label>`)}
    ${fieldError(eventsId, errors.events)}
  </fieldset>`;
}

// Why the service refused an endpoint's URL (address-policy.ts, endpoint-urls.ts), in the words of someone
// pasting an address into a form. A blank or too long URL is refused by the schema first (plainWords says
// those); anything else falls back to plainWords too.
const URL_WORDS: Array<[RegExp, string | ((...groups: string[]) => string)]> = [
  [/^URL must use https:\/\/$/, "Use an address that starts with https://."],
  [
    /^URL must not contain credentials$/,
    "Remove the user name and password from the address; your receiver checks each delivery's signature instead.",
  ],
  [
    /^URL contains whitespace or control characters$/,
    "Remove the spaces (or other invisible characters) from the address.",
  ],
  [/^(not a valid URL|URL has no host)$/, "Enter a full address such as https://example.com/webhooks."],
  [/^port must be between 1 and 65535$/, "Use a port between 1 and 65535, or leave the port out."],
  [
    /^address (\S+) is not public$/,
    (address) =>
      `${address} is a private or reserved address: use an address on the public internet, where our servers can reach it.`,
  ],
  [
    /^must resolve to public addresses only$/,
    "This host name leads to a private or reserved address: use one on the public internet, where our servers can reach it.",
  ],
  [/^host does not resolve$/, "No server was found under this host name: check the spelling of the address."],
];

/** A refused URL's reason in plain words. */
function urlWords(reason: string): string {
  for (const [pattern, words] of URL_WORDS) {
    const match = pattern.exec(reason);
    if (match) return typeof words === "string" ? words : words(...match.slice(1));
  }
  return plainWords(reason);
}

/**
 * An endpoint form's failure: every error beside its field. A refused URL (`invalid_url`) goes beside the URL
 * field whether or not the error names it; `events.0` is the events fieldset.
 */
export function endpointFailure(error: unknown): { status: number; flash: Flash; fields: FieldErrors } {
  if (error instanceof ValidationError && error.code === "invalid_url") {
    const reason = error.details?.find((d) => d.path === "url")?.message ?? error.message.replace(/^url /, "");
    return placedFailure(400, {
      url: refusedAsLocal(error) ? `${urlWords(reason)} ${ALLOW_PRIVATE_HINT}` : urlWords(reason),
    });
  }
  return formFailure(error, (path) => {
    const head = path.split(".")[0];
    return head === "url" || head === "description" || head === "events" ? head : undefined;
  });
}

/** A signing secret, in the response that created it only: never in a URL, never on a later page. */
export function secretOnce(endpoint: Endpoint, heading: string): SafeHtml {
  return html`<section class="card" aria-labelledby="secret-shown">
<h2 id="secret-shown">${heading}</h2>
<p class="alert warn" role="status">Copy the signing secret now: it is shown only once. Your receiver verifies each delivery's signature with it.</p>
<div class="secret"><code id="endpoint-secret">${endpoint.secret ?? ""}</code><button type="button" class="secondary" data-copy="endpoint-secret">Copy secret</button></div>
<p><a href="/webhooks/${endpoint.id}">Open the endpoint <code>${endpoint.url}</code></a></p>
</section>`;
}
