import { randomBytes, randomUUID } from "node:crypto";

export const newId = (): string => randomUUID();

/** Event ids: `evt_` followed by hex (docs/webhooks.md, "What arrives" and "Delivery rules"), stable across retries and resends. */
export const newEventId = (): string => `evt_${randomBytes(16).toString("hex")}`;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id that is not even a UUID cannot exist: answer 404 without asking the database a query it would reject. */
export const isUuid = (value: string): boolean => UUID_RE.test(value);
