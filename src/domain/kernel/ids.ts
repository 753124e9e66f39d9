import { randomBytes, randomUUID } from "node:crypto";
import { z } from "zod";

/** Limits of a client's own ids (event ids, contract ids), shared with the usage fast path (usage/ingest/parse.ts). */
export const ID_MAX = 255;
export const ID_PATTERN = /^[^\u0000-\u001f\u007f]+$/;

/** A client's own id: a usage event's `event_id`, a contract's id as sent in `external_contract_id`. */
export const externalIdText = z.string().min(1).max(ID_MAX).regex(ID_PATTERN, "must not contain control characters");

export const newId = (): string => randomUUID();

/** Event ids: `evt_` followed by hex (docs/webhooks.md, "What arrives" and "Delivery rules"), stable across retries and resends. */
export const newEventId = (): string => `evt_${randomBytes(16).toString("hex")}`;

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A path id that is not even a UUID cannot exist: answer 404 without asking the database a query it would reject. */
export const isUuid = (value: string): boolean => UUID_RE.test(value);
