/**
 * What one request's bad data may cost (docs/decisions.md, "Rating" 9): the database refusing a value must
 * fail that value's event alone, never the other events of its request nor other requests written with it.
 */

/** What a write of rated events reports: the ids it did not store, and why. */
export interface WrittenDuplicates {
  /** Stored already (or sent by an earlier request of the same call): nothing was billed for them. */
  duplicates: Set<string>;
  /** Of those, the ones the write compared with their stored event (true: the copy differs). */
  verdicts: Map<string, boolean>;
  /** Refused because their period's invoice is no longer a draft (period_closed): stored nowhere. */
  closed: Set<string>;
  /** Refused by the database as values it cannot hold (id → its words): stored nowhere. */
  unstorable: Map<string, string>;
}

export const nothingRefused = (): WrittenDuplicates => ({
  duplicates: new Set(),
  verdicts: new Map(),
  closed: new Set(),
  unstorable: new Map(),
});

/**
 * Whether the database refused the data itself: SQLSTATE class 22, "data exception" (a value out of range,
 * an invalid date or time zone, a numeric overflow). Anything else (a lost connection, a bug) is no event's
 * fault and stays a server error.
 */
export function refusesData(error: unknown): error is Error {
  const code = (error as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("22");
}

/** The sentence an event refused by the database is answered with. */
const unstorableMessage = (error: Error): string => `The database cannot store this event: ${error.message}`;

/** Folds the reports of writes of disjoint parts of one request into one. */
export function mergeWritten(reports: readonly WrittenDuplicates[]): WrittenDuplicates {
  const merged = nothingRefused();
  for (const r of reports) {
    for (const id of r.duplicates) merged.duplicates.add(id);
    for (const [id, differs] of r.verdicts) merged.verdicts.set(id, differs);
    for (const id of r.closed) merged.closed.add(id);
    for (const [id, why] of r.unstorable) merged.unstorable.set(id, why);
  }
  return merged;
}

/** The ids of `items` a report says were stored by its write. */
export function storedBy<T>(items: readonly T[], idOf: (item: T) => string, report: WrittenDuplicates): string[] {
  return items
    .map(idOf)
    .filter((id) => !report.duplicates.has(id) && !report.closed.has(id) && !report.unstorable.has(id));
}

/**
 * Writes `items` with `write` (one transaction per call). When the database refuses a value in them, writes
 * them again in halves, first half first (so batch order, which monthly caps follow, is kept), down to the
 * single item it refuses, which is reported `unstorable`; every other item is written. A write that fails
 * for another reason fails the whole; `onPartStored` is told of the ids stored before that, so the caller can
 * count them as the request's own when it goes again.
 */
export async function writeIsolating<T>(
  items: readonly T[],
  idOf: (item: T) => string,
  write: (part: readonly T[]) => Promise<WrittenDuplicates>,
  onPartStored: (ids: readonly string[]) => void = () => {},
): Promise<WrittenDuplicates> {
  try {
    return await write(items);
  } catch (error) {
    return isolateRefusal(items, idOf, write, error, onPartStored);
  }
}

/** writeIsolating, once a write of all of `items` has failed with `error`. */
export async function isolateRefusal<T>(
  items: readonly T[],
  idOf: (item: T) => string,
  write: (part: readonly T[]) => Promise<WrittenDuplicates>,
  error: unknown,
  onPartStored: (ids: readonly string[]) => void = () => {},
): Promise<WrittenDuplicates> {
  if (!refusesData(error)) throw error;
  if (items.length === 1) {
    const refused = nothingRefused();
    refused.unstorable.set(idOf(items[0]!), unstorableMessage(error));
    return refused;
  }
  const half = Math.ceil(items.length / 2);
  const first = await writeIsolating(items.slice(0, half), idOf, write, onPartStored);
  onPartStored(storedBy(items.slice(0, half), idOf, first));
  const second = await writeIsolating(items.slice(half), idOf, write, onPartStored);
  return mergeWritten([first, second]);
}
