import { parseUsageEvent } from "../parse-usage-event.js";
import type { UsageEventInput } from "../usage-schemas.js";
import type { Outcome, Stage } from "./outcome.js";

/** An entry of the batch that is a well-formed event. */
export interface Parsed {
  index: number;
  input: UsageEventInput;
}

export interface ParsedBatch {
  /** Every entry's `event_id` when it is a string (the answer names it), else null. */
  eventIds: readonly (string | null)[];
  parsed: readonly Parsed[];
  /** The entries that are not well-formed: refused as invalid_event. */
  refused: ReadonlyMap<number, Outcome>;
}

/** Stage 1: the shape of each event on its own (parse-usage-event.ts); a bad one is refused, its neighbours go on. */
function parseBatch(rawEvents: readonly unknown[]): ParsedBatch {
  const eventIds = new Array<string | null>(rawEvents.length);
  const parsed: Parsed[] = [];
  const refused = new Map<number, Outcome>();
  for (let index = 0; index < rawEvents.length; index++) {
    const raw = rawEvents[index];
    const rawId = (raw as { event_id?: unknown } | null)?.event_id;
    eventIds[index] = typeof rawId === "string" ? rawId : null;
    const result = parseUsageEvent(raw);
    if (result.ok) parsed.push({ index, input: result.input });
    else refused.set(index, { kind: "rejected", code: "invalid_event", message: result.message });
  }
  return { eventIds, parsed, refused };
}

/** Stage 1 chained to the judge: the batch parsed, handed on. */
export const parseStage =
  (next: Stage<ParsedBatch>): Stage<readonly unknown[]> =>
  (tenant, rawEvents) =>
    next(tenant, parseBatch(rawEvents));
