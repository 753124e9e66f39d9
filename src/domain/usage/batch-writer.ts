import type { CompanyData } from "../kernel/tenancy.js";
import type { Clock } from "../kernel/clock.js";
import type { LineBook, WantedInvoice } from "../invoices/line-book.js";
import { ingestRatedBatch, type BatchEventWrite } from "./usage-repository.js";
import { isolateRefusal, mergeWritten, storedBy, type WrittenDuplicates } from "./write-isolation.js";

interface Pending {
  writes: readonly BatchEventWrite[];
  wanted: (contractId: string, periodStart: string) => WantedInvoice;
  resolve(written: WrittenDuplicates): void;
  reject(error: unknown): void;
}

interface CompanyQueue {
  pending: Pending[];
  running: number;
}

/**
 * Calls in flight per lane, company and process (BILLING_INGEST_CALLS_IN_FLIGHT). One by default: a second
 * call of the same lane mostly waits for the first one's invoice locks, and costs PostgreSQL ~25 % more CPU
 * per event for it (docs/performance.md, step 13).
 */
const DEFAULT_CALLS_IN_FLIGHT = 1;

/**
 * Lanes per company and process (BILLING_INGEST_LANES): a company's contracts are spread over this many
 * lanes, each with its own calls in flight. Lanes never share a draft invoice, so their calls run side by
 * side on separate connections without waiting for each other's locks; two fit a 2-core database best
 * (docs/performance.md, step 19).
 */
const DEFAULT_LANES = 2;

/**
 * Thrown to a request whose events were rated against contracts that changed since: rate them again.
 * `storedIds`: events of the request that another lane stored meanwhile (they are the request's own, not
 * duplicates, when it goes again).
 */
export class StaleContracts extends Error {
  constructor(
    readonly contractIds: string[],
    readonly storedIds: readonly string[] = [],
  ) {
    super(`contracts changed while rating: ${contractIds.join(", ")}`);
  }
}

/** How a process writes usage (configuration: BILLING_INGEST_CALLS_IN_FLIGHT, BILLING_INGEST_LANES). */
export interface IngestSettings {
  callsInFlight?: number | undefined;
  lanes?: number | undefined;
}

/** At most this many events go to the database in one call; more wait for the next. */
const MAX_EVENTS_PER_CALL = 2000;

/**
 * Group commit for rated batches (issue: performance). A request's events go to the lanes of their contracts
 * (one lane for most small batches). In each lane, requests of one company that arrive while its previous
 * call is in flight are folded into the next call of billing_ingest_usage_lines: one transaction, one
 * commit, one pass over the lane's draft invoices for all of them. Every event lands together with its draft
 * invoice; a request whose events span lanes is written by one call per lane (on a server error, part of it
 * may be stored, and sending it again is safe: docs/decisions.md, "Rating" 8). Inside one process, calls of one lane
 * never race for the same invoice locks, and requests of different companies never wait for each other.
 */
export function createBatchWriter({
  clock,
  book,
  settings: { callsInFlight = DEFAULT_CALLS_IN_FLIGHT, lanes = DEFAULT_LANES } = {},
}: {
  clock: Clock;
  book: Pick<LineBook, "ensure">;
  settings?: IngestSettings | undefined;
}) {
  const queues = new Map<string, CompanyQueue>();

  async function drain(key: string, company: CompanyData, queue: CompanyQueue): Promise<void> {
    queue.running += 1;
    try {
      while (queue.pending.length > 0) {
        const group: Pending[] = [];
        let events = 0;
        while (
          queue.pending.length > 0 &&
          (group.length === 0 || events + queue.pending[0]!.writes.length <= MAX_EVENTS_PER_CALL)
        ) {
          const next = queue.pending.shift()!;
          group.push(next);
          events += next.writes.length;
        }
        await writeGroup(company, group);
      }
    } finally {
      queue.running -= 1;
      if (queue.pending.length === 0 && queue.running === 0) queues.delete(key);
    }
  }

  async function writeGroup(company: CompanyData, group: Pending[]): Promise<void> {
    const closed = new Set<string>();
    // Each reason to call again has its own budget: events refused as closed never use up the others'.
    let draftsCreated = 0;
    let conflicts = 0;
    while (group.length > 0) {
      // An id sent by two requests of the group goes to the database once, for the first of them.
      const seen = new Set<string>();
      const merged: BatchEventWrite[] = [];
      const sentBy = group.map((p) =>
        p.writes.filter((w) => {
          if (closed.has(w.id) || seen.has(w.id)) return false;
          seen.add(w.id);
          merged.push(w);
          return true;
        }),
      );
      let outcome: Awaited<ReturnType<typeof ingestRatedBatch>>;
      try {
        outcome = merged.length === 0 ? nothingWritten() : await ingestRatedBatch(company.data, merged, clock.now());
        if (outcome.stale.length > 0) {
          // Requests rated against a changed contract start over; the others go again without them.
          const stale = new Set(outcome.stale);
          const error = new StaleContracts(outcome.stale);
          const [affected, rest] = partition(group, (p) => p.writes.some((w) => stale.has(w.contractId)));
          for (const p of affected) p.reject(error);
          group = rest;
          continue;
        }
        if (outcome.closed.length > 0) {
          // Their invoice was issued: refused, never moved to another invoice; the rest go again without them.
          for (const id of outcome.closed) closed.add(id);
          continue;
        }
        if (outcome.missing.length > 0) {
          if (draftsCreated++ >= 3) throw new Error("draft invoices could not be created");
          const wanted = outcome.missing.map((m) =>
            group
              .find((p) => p.writes.some((w) => w.contractId === m.contractId && w.periodStart === m.periodStart))!
              .wanted(m.contractId, m.periodStart),
          );
          await book.ensure(company, wanted);
          continue;
        }
      } catch (error) {
        // Requests of other processes sharing event ids can deadlock with this one; PostgreSQL aborts one.
        // 40001: a draft was issued while the call stored usage on it (the call was taken back).
        const code = (error as { code?: string }).code;
        if ((code === "40P01" || code === "40001") && conflicts++ < 5) continue;
        await isolate(company, group, error);
        return;
      }
      // A request's duplicates: its ids that this call did not store (stored before, or sent by an
      // earlier request of the group). The call judged those it was sent, when it compared them.
      const stored = outcome.stored === "all" ? null : new Set(outcome.stored);
      const differs = new Set(outcome.differs);
      const recheck = new Set(outcome.recheck);
      group.forEach((p, i) => {
        const mine = new Set<string>();
        const verdicts = new Map<string, boolean>();
        for (const w of sentBy[i]!) {
          if (stored === null || stored.has(w.id)) mine.add(w.id);
          else if (outcome.compared && !recheck.has(w.id)) verdicts.set(w.id, differs.has(w.id));
        }
        const duplicates = new Set<string>();
        const refused = new Set<string>();
        for (const w of p.writes) {
          if (closed.has(w.id) && !mine.has(w.id)) refused.add(w.id);
          else if (!mine.has(w.id)) duplicates.add(w.id);
        }
        p.resolve({ duplicates, verdicts, closed: refused, unstorable: new Map() });
      });
      return;
    }
  }

  /**
   * A group's call failed for a reason that is none of its known outcomes. Several requests: each is written
   * alone, in order, so that only the one whose data fails gets the error. One request: an event the database
   * refuses is found by halves and answered on its own (write-isolation.ts); any other failure is the
   * request's.
   */
  async function isolate(company: CompanyData, group: Pending[], error: unknown): Promise<void> {
    if (group.length > 1) {
      for (const p of group) await writeGroup(company, [p]);
      return;
    }
    const p = group[0]!;
    const stored: string[] = [];
    try {
      const written = await isolateRefusal(
        p.writes,
        (w) => w.id,
        (part) => writeAlone(company, [...part], p.wanted),
        error,
        (ids) => stored.push(...ids),
      );
      p.resolve(written);
    } catch (failure) {
      // Parts stored before a later part went stale are the request's own when it goes again.
      p.reject(
        failure instanceof StaleContracts
          ? new StaleContracts(failure.contractIds, [...failure.storedIds, ...stored])
          : failure,
      );
    }
  }

  /** One call for `writes` alone, with the group's retries, outside any queue (the caller holds the lane). */
  function writeAlone(
    company: CompanyData,
    writes: readonly BatchEventWrite[],
    wanted: Pending["wanted"],
  ): Promise<WrittenDuplicates> {
    return new Promise((resolve, reject) => void writeGroup(company, [{ writes, wanted, resolve, reject }]));
  }

  function enqueue(
    company: CompanyData,
    lane: number,
    writes: readonly BatchEventWrite[],
    wanted: Pending["wanted"],
  ): Promise<WrittenDuplicates> {
    return new Promise((resolve, reject) => {
      const key = `${lane}|${company.companyId}`;
      let queue = queues.get(key);
      if (!queue) {
        queue = { pending: [], running: 0 };
        queues.set(key, queue);
      }
      queue.pending.push({ writes, wanted, resolve, reject });
      if (queue.running < callsInFlight) void drain(key, company, queue);
    });
  }

  return {
    /** Stores a rated batch; resolves with the ids that were stored already (duplicates). */
    async write(
      company: CompanyData,
      writes: readonly BatchEventWrite[],
      wanted: Pending["wanted"],
    ): Promise<WrittenDuplicates> {
      const byLane = new Map<number, BatchEventWrite[]>();
      for (const w of writes) {
        const lane = laneOf(w.contractId, lanes);
        const list = byLane.get(lane);
        if (list) list.push(w);
        else byLane.set(lane, [w]);
      }
      if (byLane.size === 1) return enqueue(company, byLane.keys().next().value!, writes, wanted);
      const parts = [...byLane];
      const settled = await Promise.allSettled(parts.map(([lane, part]) => enqueue(company, lane, part, wanted)));
      // Every lane has answered; a failure is the request's, after the lanes that succeeded are accounted for.
      const written: WrittenDuplicates[] = [];
      const stored: string[] = [];
      const staleIds = new Set<string>();
      let failure: unknown = null;
      settled.forEach((result, i) => {
        if (result.status === "fulfilled") {
          written.push(result.value);
          stored.push(...storedBy(parts[i]![1], (w) => w.id, result.value));
        } else if (result.reason instanceof StaleContracts) {
          for (const id of result.reason.contractIds) staleIds.add(id);
        } else {
          failure ??= result.reason;
        }
      });
      if (failure !== null) throw failure;
      if (staleIds.size > 0) throw new StaleContracts([...staleIds], stored);
      return mergeWritten(written);
    },
  };
}

/** The outcome of a call left with no event to send (every one refused as closed). */
const nothingWritten = () => ({
  stale: [],
  missing: [],
  closed: [],
  stored: [],
  compared: false,
  differs: [],
  recheck: [],
});

function partition<T>(items: T[], test: (item: T) => boolean): [T[], T[]] {
  const yes: T[] = [];
  const no: T[] = [];
  for (const item of items) (test(item) ? yes : no).push(item);
  return [yes, no];
}

/** A contract's lane, from a hash of its id (FNV-1a): the same lane in every process. */
export function laneOf(contractId: string, lanes: number): number {
  if (lanes === 1) return 0;
  let hash = 0x811c9dc5;
  for (let i = 0; i < contractId.length; i++) hash = Math.imul(hash ^ contractId.charCodeAt(i), 0x01000193);
  return (hash >>> 0) % lanes;
}
