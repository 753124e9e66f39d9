import type { Tenancy } from "../kernel/tenancy.js";
import { requireScope } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import { NotFoundError } from "../kernel/errors.js";
import { isUuid, newId } from "../kernel/ids.js";
import { checkUrl } from "./endpoint-urls.js";
import { DEFAULT_EVENT_TYPES, type EventType } from "./outbox.js";
import { generateSigningSecret } from "./sign-payload.js";
import * as repo from "./webhook-repository.js";
import type { Endpoint } from "./webhook-schemas.js";

function presentEndpoint(row: repo.EndpointRow, withSecret = false): Endpoint {
  const endpoint: Endpoint = {
    object: "webhook_endpoint",
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.events as EventType[],
    status: row.enabled ? "enabled" : "disabled",
    created_at: row.created_at.toISOString(),
  };
  if (withSecret) endpoint.secret = row.secret;
  return endpoint;
}

/** One of the tenant's company's endpoints; another company's id is a 404, like a missing one. */
export async function findOwnEndpoint(tenant: Tenancy, id: string): Promise<repo.EndpointRow> {
  const row = isUuid(id) ? await repo.findEndpoint(tenant.data, id) : undefined;
  if (!row) throw new NotFoundError("webhook_endpoint");
  return row;
}

/** A company's webhook endpoints: created, listed, changed, their secret rotated, removed. */
export function createWebhookEndpoints({ clock, allowPrivate }: { clock: Clock; allowPrivate: boolean }) {
  return {
    async create(
      tenant: Tenancy,
      input: { url: string; events?: EventType[] | undefined; description?: string | undefined },
    ): Promise<Endpoint> {
      requireScope(tenant, "webhooks:write");
      const now = clock.now();
      const row: repo.EndpointRow = {
        company_id: tenant.companyId,
        id: newId(),
        url: await checkUrl(input.url, { allowPrivate }),
        description: input.description ?? null,
        events: [...new Set(input.events ?? DEFAULT_EVENT_TYPES)],
        enabled: true,
        secret: generateSigningSecret(),
        created_at: now,
        updated_at: now,
      };
      await repo.insertEndpoint(tenant.data, row);
      return presentEndpoint(row, true);
    },

    async list(tenant: Tenancy): Promise<Endpoint[]> {
      requireScope(tenant, "webhooks:read", "webhooks:write");
      return (await repo.listEndpoints(tenant.data)).map((row) => presentEndpoint(row));
    },

    async get(tenant: Tenancy, id: string): Promise<Endpoint> {
      requireScope(tenant, "webhooks:read", "webhooks:write");
      return presentEndpoint(await findOwnEndpoint(tenant, id));
    },

    /** url, events, description, enabled; disabling stops pending retries (they end failed). */
    async update(
      tenant: Tenancy,
      id: string,
      input: {
        url?: string | undefined;
        events?: EventType[] | undefined;
        description?: string | null | undefined;
        enabled?: boolean | undefined;
      },
    ): Promise<Endpoint> {
      requireScope(tenant, "webhooks:write");
      const row = await findOwnEndpoint(tenant, id);
      const next: repo.EndpointRow = {
        ...row,
        url: input.url !== undefined ? await checkUrl(input.url, { allowPrivate }) : row.url,
        events: input.events !== undefined ? [...new Set(input.events)] : row.events,
        description: input.description !== undefined ? input.description : row.description,
        enabled: input.enabled ?? row.enabled,
        updated_at: clock.now(),
      };
      await tenant.transaction(async (tx) => {
        await repo.updateEndpoint(tx, next);
        if (row.enabled && !next.enabled) await repo.stopPendingDeliveries(tx, row.id);
      });
      return presentEndpoint(next, true);
    },

    /** A new secret, effective at once: the old one signs nothing more (docs/webhooks.md, "Delivery rules"). */
    async rotateSecret(tenant: Tenancy, id: string): Promise<Endpoint> {
      requireScope(tenant, "webhooks:write");
      const row = await findOwnEndpoint(tenant, id);
      const next = { ...row, secret: generateSigningSecret(), updated_at: clock.now() };
      await repo.updateEndpoint(tenant.data, next);
      return presentEndpoint(next, true);
    },

    async remove(tenant: Tenancy, id: string): Promise<{ object: "webhook_endpoint"; id: string; deleted: true }> {
      requireScope(tenant, "webhooks:write");
      if (!isUuid(id) || !(await repo.deleteEndpoint(tenant.data, id))) throw new NotFoundError("webhook_endpoint");
      return { object: "webhook_endpoint", id, deleted: true };
    },
  };
}
