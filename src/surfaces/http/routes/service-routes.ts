import type { FastifyInstance } from "fastify";
import type { Database } from "../../../db/database.js";
import type { Metrics } from "../../../platform/metrics.js";

/** Health, readiness, metrics and the OpenAPI document (docs/operations.md, "Health and metrics"; docs/api.md for the OpenAPI document). */
export function serviceRoutes(deps: { db: Database; metrics: Metrics }) {
  return async (app: FastifyInstance) => {
    const hide = { schema: { hide: true } };
    app.get("/healthz", hide, async () => ({ status: "ok" }));
    app.get("/readyz", hide, async (_request, reply) => {
      const ready = await deps.db.ping();
      return reply.code(ready ? 200 : 503).send({ status: ready ? "ready" : "database unavailable" });
    });
    app.get("/metrics", hide, async (_request, reply) => {
      return reply.type(deps.metrics.registry.contentType).send(await deps.metrics.registry.metrics());
    });
    app.get("/v1/openapi.json", hide, async () => app.swagger());
  };
}
