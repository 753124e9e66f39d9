// The bodies of the API's actions that take no fields (finalize, void, send, rotate-secret, a DELETE, ...) or
// only optional ones (pay's `paid_date`, a usage void's `reason`): one rule for all of them (docs/api.md,
// "Conventions"). Such an action takes no body, an empty body (with or without `Content-Type: application/json`)
// and `{}` alike; a field it does not know is refused 400 `invalid_request` naming it, as on every other body.
import { z } from "zod";

/** The body of an action that takes none: nothing, an empty body, `null` or `{}`; any field is unknown. */
export const noBody = () => z.object({}).strict().nullish();

/** An action's body whose fields are all optional: it may be left out, or be empty, as `noBody`'s. */
export const optionalBody = <T extends z.ZodObject>(schema: T) => schema.nullish();

/**
 * Whether a route takes a request without a body: it has no body schema, or its schema takes `undefined` (the
 * two above). An empty body sent as `application/json` is then no body, not a 400 `invalid_json`.
 */
export const bodyMayBeLeftOut = (schema: unknown): boolean =>
  schema === undefined || (schema instanceof z.ZodType && schema.safeParse(undefined).success);
