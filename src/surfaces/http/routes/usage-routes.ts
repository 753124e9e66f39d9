import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import { calendarDate, datesInOrder } from "../../../domain/kernel/calendar-date.js";
import type { Services } from "../../../domain/services.js";
import {
  submitResultSchema,
  submitUsageBody,
  USAGE_EVENT_STATUSES,
  usageEventSchema,
  voidUsageBody,
} from "../../../domain/usage/usage-schemas.js";
import { optionalBody } from "../action-body.js";
import { actorOf } from "../authenticate.js";
import { listEnvelope, listSchema, pageQuery, toPageRequest } from "../list-envelope.js";
import { errorResponses } from "../openapi-errors.js";

const date = calendarDate();
const usageEventList = listSchema(usageEventSchema, "UsageEventList");

/** The usage list's filters and page, for GET /v1/billing/usage and the dashboard's usage page alike. */
export const usageListQuery = datesInOrder(
  z.object({
    contract: z.string().min(1).max(255).optional(),
    metric: z.string().min(1).max(100).optional(),
    from: date.optional().describe("Service periods ending on or after this date; on or before `to`"),
    to: date.optional().describe("Service periods starting on or before this date"),
    status: z.enum(USAGE_EVENT_STATUSES).optional(),
    ...pageQuery,
  }),
);

export function usageRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.post(
      "/v1/billing/usage",
      {
        schema: {
          operationId: "submitUsage",
          tags: ["Usage"],
          summary: "Submit 1 to 100 usage events",
          description:
            "Each event is judged on its own: valid ones are stored, rated at once and put on the draft invoice; rejected ones say why. An event_id already stored answers accepted (duplicate: true) and bills nothing.",
          body: submitUsageBody,
          // A refused event is answered in the 200 (`rejected`, with its code); the whole request is refused
          // only when it is not a list of 1 to 100 events (400 invalid_request, one of the shared codes).
          response: { 200: submitResultSchema },
        },
        // The schemas above document the answer; the answer is built by the service in exactly that shape,
        // so it is written as is rather than parsed again by zod (100 events a request: docs/performance.md).
        serializerCompiler: () => (data) => JSON.stringify(data),
      },
      async (request) => services.usage.submit(actorOf(request), request.body.events),
    );

    app.get(
      "/v1/billing/usage",
      {
        schema: {
          operationId: "listUsageEvents",
          tags: ["Usage"],
          summary: "List usage events, newest first",
          description:
            "The company's usage events, newest first, cursor-paginated (`limit`, `starting_after`), filtered by contract, metric, status and by the months `from`…`to` their timestamps fall in. Each event carries its rating: the rule, rate and amount it was charged. Scope `usage:read` or `usage:write`.",
          querystring: usageListQuery,
          response: {
            200: usageEventList,
            ...errorResponses({ 400: { invalid_cursor: "`starting_after` names no usage event of this company" } }),
          },
        },
      },
      async (request) => {
        const q = request.query;
        const page = await services.usage.list(
          actorOf(request),
          { contractId: q.contract, metric: q.metric, from: q.from, to: q.to, status: q.status },
          toPageRequest(q),
        );
        return listEnvelope(page);
      },
    );

    app.get(
      "/v1/billing/usage/:event_id",
      {
        schema: {
          operationId: "getUsageEvent",
          tags: ["Usage"],
          summary: "Get a usage event",
          description:
            "One usage event by its event id, with its rating (rule, pricing version, applied rate, rated amount) and status. Scope `usage:read` or `usage:write`.",
          params: z.object({ event_id: z.string().min(1).max(255) }),
          response: {
            200: usageEventSchema,
            ...errorResponses({ 404: { not_found: "no usage event with this id for this company" } }),
          },
        },
      },
      async (request) => services.usage.get(actorOf(request), request.params.event_id),
    );

    app.post(
      "/v1/billing/usage/:event_id/void",
      {
        schema: {
          operationId: "voidUsageEvent",
          tags: ["Usage"],
          summary: "Void a usage event of an open period",
          description:
            "Takes the event's charge off its draft invoice: the draft is priced again without it (events of the same rule priced after it get back the cap room or tier it took). The event stays stored with status `voided`. Voiding a voided event changes nothing. An event on an issued invoice answers 409 `period_closed`: correct it with a credit note. Scope `usage:write`.",
          params: z.object({ event_id: z.string().min(1).max(255) }),
          body: optionalBody(voidUsageBody.meta({ examples: [{ reason: "sent twice by the meter" }] })),
          response: {
            200: usageEventSchema,
            ...errorResponses({
              404: { not_found: "no usage event with this id for this company" },
              409: { period_closed: "the event's invoice has left draft" },
            }),
          },
        },
      },
      async (request) => services.usage.void(actorOf(request), request.params.event_id, request.body?.reason ?? null),
    );
  };
}
