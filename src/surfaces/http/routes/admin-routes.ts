import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import type { FastifyRequest } from "fastify";
import { z } from "zod";
import { secretsEqual } from "../../../domain/access/api-key-secret.js";
import { ALL_SCOPES } from "../../../domain/kernel/actor.js";
import { instantInput } from "../../../domain/kernel/calendar-date.js";
import { noBody, optionalBody } from "../action-body.js";
import { RateLimitedError, UnauthenticatedError } from "../../../domain/kernel/errors.js";
import type { Services } from "../../../domain/services.js";
import type { FailureThrottle } from "../../../platform/failure-throttle.js";

// PostgreSQL text cannot hold NUL: refuse it here (400) rather than let the insert fail (500).
const noNul = /^[^\u0000]*$/;
const name = z.string().trim().min(1).max(200).regex(noNul, "must not contain NUL characters");
const companyBody = z.object({ name }).strict();
const apiKeyBody = z
  .object({
    name: name.optional(),
    scopes: z.array(z.string().max(64)).max(ALL_SCOPES.length).optional(),
    expires_at: instantInput().optional(),
  })
  .strict();
const userBody = z
  .object({
    email: z.string().trim().max(254).pipe(z.email()),
    password: z.string().min(8).max(1024),
  })
  .strict();
const idParams = z.object({ id: z.string().max(100) });

/**
 * The operators' API (README.md, "Operators"; docs/operations.md, "Operators and bootstrap"). Mounted only when BILLING_ADMIN_TOKEN is set; otherwise
 * these paths do not exist and answer 404 like any unknown path.
 */
export function adminRoutes(
  services: Services,
  adminToken: string,
  failures: FailureThrottle | null,
): FastifyPluginAsyncZod {
  return async (app) => {
    // A wrong token counts against the address's failure budget (then 429 instead of 401); the right token
    // is compared first and never refused by it.
    app.addHook("onRequest", async (request: FastifyRequest) => {
      const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? "");
      if (!match) throw new UnauthenticatedError("Missing admin token", "missing_admin_token");
      if (secretsEqual(match[1]!, adminToken)) return;
      const wait = failures?.refusal(request.ip, "admin");
      if (wait !== undefined) throw RateLimitedError.failedAttempts(wait);
      failures?.countFailure(request.ip);
      throw new UnauthenticatedError("Invalid admin token", "invalid_admin_token");
    });

    const hide = { hide: true } as const;

    app.post("/admin/v1/companies", { schema: { ...hide, body: companyBody } }, async (request, reply) => {
      return reply.code(201).send(await services.access.createCompany(request.body.name));
    });

    app.post(
      "/admin/v1/companies/:id/api-keys",
      // Every field is optional, so the body may be left out (Fastify then hands over null, not undefined).
      { schema: { ...hide, params: idParams, body: optionalBody(apiKeyBody) } },
      async (request, reply) => {
        const body = request.body ?? {};
        const key = await services.access.createApiKey(request.params.id, {
          name: body.name,
          scopes: body.scopes,
          expiresAt: body.expires_at ? new Date(body.expires_at) : undefined,
        });
        return reply.code(201).send(key);
      },
    );

    app.delete("/admin/v1/api-keys/:id", { schema: { ...hide, params: idParams, body: noBody() } }, async (request) => {
      return services.access.revokeApiKey(request.params.id);
    });

    app.get(
      "/admin/v1/verify",
      { schema: { ...hide, querystring: z.object({ company_id: z.string().uuid().optional() }) } },
      async (request) => services.invariants.verify(request.query.company_id ?? null),
    );

    app.post(
      "/admin/v1/companies/:id/users",
      { schema: { ...hide, params: idParams, body: userBody } },
      async (request, reply) => {
        const user = await services.access.createUser(request.params.id, request.body.email, request.body.password);
        return reply.code(201).send({ object: user.object, id: user.id, email: user.email });
      },
    );
  };
}
