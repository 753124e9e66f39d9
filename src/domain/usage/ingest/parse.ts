import { Big, readDecimal } from "../../kernel/money.js";
import { instantRefusal } from "../../kernel/time-range.js";
import { ID_MAX, ID_PATTERN, METRIC_MAX, SCOPE_MAX, usageEventInput, type UsageEventInput } from "../usage-schemas.js";
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

/** Stage 1: the shape of each event on its own (parseUsageEvent); a bad one is refused, its neighbours go on. */
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

export type ParsedEvent = { ok: true; input: UsageEventInput } | { ok: false; message: string };

/**
 * One raw event checked against `usageEventInput` (docs/api.md, "Usage events"). A well-formed event takes the fast path
 * below; anything it does not accept goes through the schema itself, which decides and words the refusal.
 * So the schema stays the one definition of an event, and the fast path only has to be right about what it
 * accepts (parse.test.ts holds it to the schema). Why: zod's per-event parse and its garbage
 * were a tenth of the service's CPU under load (docs/performance.md, step 9).
 */
export function parseUsageEvent(raw: unknown): ParsedEvent {
  const input = acceptWellFormed(raw);
  if (input) return { ok: true, input };
  const result = usageEventInput.safeParse(raw);
  if (result.success) return { ok: true, input: result.data };
  return { ok: false, message: describeIssue(result.error.issues[0]! as never) };
}

function describeIssue(issue: { path: PropertyKey[]; message: string; code: string; keys?: string[] }): string {
  if (issue.code === "unrecognized_keys" && issue.keys) return `Unknown field: ${issue.keys.join(", ")}`;
  const path = issue.path.map(String).join(".");
  if (/received undefined$/.test(issue.message)) return `${path} is required`;
  // Decimal refusals already start with the field's name (readDecimal).
  return path && !issue.message.startsWith(`${path} `) ? `${path}: ${issue.message}` : issue.message;
}

const FIELDS: ReadonlySet<string> = new Set(Object.keys(usageEventInput.shape));

const isId = (value: unknown): value is string =>
  typeof value === "string" && value.length >= 1 && value.length <= ID_MAX && ID_PATTERN.test(value);

/** The decimal, or undefined when the schema might say otherwise (the schema then decides). */
function decimal(value: unknown): Big | undefined {
  const read = readDecimal(value, "");
  return read instanceof Big ? read : undefined;
}

/** A scope field (trimmed, as the schema's .trim()), or null when it is not an acceptable one. */
function scope(value: unknown): string | null {
  if (typeof value !== "string") return null;
  const trimmed = value.trim();
  return trimmed.length >= 1 && trimmed.length <= SCOPE_MAX ? trimmed : null;
}

/**
 * The parsed event when `raw` is one the schema accepts, giving the same output; undefined otherwise (and
 * for anything unusual: the schema then decides). Never accepts what the schema refuses.
 */
export function acceptWellFormed(raw: unknown): UsageEventInput | undefined {
  if (typeof raw !== "object" || raw === null || Array.isArray(raw) || Object.getPrototypeOf(raw) !== Object.prototype)
    return undefined;
  const event = raw as Record<string, unknown>;
  for (const key of Object.keys(event)) if (!FIELDS.has(key)) return undefined;

  const { external_contract_id, event_id, metric, timestamp } = event;
  if (!isId(external_contract_id) || !isId(event_id)) return undefined;
  if (typeof metric !== "string" || metric.length < 1 || metric.length > METRIC_MAX) return undefined;
  if (typeof timestamp !== "string" || instantRefusal(timestamp, true) !== undefined) return undefined;
  const quantity = decimal(event.quantity);
  if (!quantity) return undefined;
  const input: UsageEventInput = { external_contract_id, event_id, metric, quantity, timestamp };

  if (event.fee_amount !== undefined) {
    const fee = decimal(event.fee_amount);
    if (!fee) return undefined;
    input.fee_amount = fee;
  }
  if (event.applied_rate !== undefined) {
    const rate = decimal(event.applied_rate);
    if (!rate) return undefined;
    input.applied_rate = rate;
  }
  for (const field of ["counterparty", "counterparty_side", "pair"] as const) {
    if (event[field] === undefined) continue;
    const value = scope(event[field]);
    if (value === null) return undefined;
    input[field] = value;
  }
  return input;
}
