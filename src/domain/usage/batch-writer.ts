import type { Database } from "../../db/database.js";
import type { Clock } from "../kernel/clock.js";
import type { DraftInvoices, WantedInvoice } from "../invoices/draft-invoices.js";
import { ingestRatedBatch, type BatchEventWrite } from "./usage-repository.js";

interface Pending {
  writes: BatchEventWrite[];
  wanted: (contractId: string, periodStart: string) => WantedInvoice;
  resolve(duplicates: Set<string>): void;
  reject(error: unknown): void;
}

interface CompanyQueue {
  pending: Pending[];
  running: number;
}

/**
 * Calls in flight per company and process (BILLING_INGEST_CALLS_IN_FLIGHT). One by default: a second call of
 * the same company mostly waits for the first one's invoice locks, and costs PostgreSQL ~25 % more CPU per
 * event for it (docs/performance.md, step 13).
 */
export const DEFAULT_CALLS_IN_FLIGHT = 1;

/** Thrown to a request whose events were rated against contracts that changed since: rate them again. */
export class StaleContracts extends Error {
  constructor(readonly contractIds: string[]) {
    super(`contracts changed while rating: ${contractIds.join(", ")}`);
  }
}

/** At most this many events go to the database in one call; more wait for the next. */
export const MAX_EVENTS_PER_CALL = 2000;

/**
 * Group commit for rated batches (issue: performance). Requests of one company that arrive while its
 * previous call is in flight are folded into the next call of billing_ingest_usage_lines: one transaction, one
 * commit, one pass over the draft invoices for all of them. Each request's events still land together or
 * not at all, and a company never has two calls racing for the same invoice locks inside one process.
 * Requests of different companies never wait for each other.
 */
export function createBatchWriter({
  db,
  clock,
  drafts,
  callsInFlight = DEFAULT_CALLS_IN_FLIGHT,
}: {
  db: Database;
  clock: Clock;
  drafts: DraftInvoices;
  callsInFlight?: number | undefined;
}) {
  const queues = new Map<string, CompanyQueue>();

  async function drain(companyId: string, queue: CompanyQueue): Promise<void> {
    queue.running += 1;
    try {
      while (queue.pending.length > 0) {
        const group: Pending[] = [];
        let events = 0;
        while (queue.pending.length > 0 && (group.length === 0 || events + queue.pending[0]!.writes.length <= MAX_EVENTS_PER_CALL)) {
          const next = queue.pending.shift()!;
          group.push(next);
          events += next.writes.length;
        }
        await writeGroup(companyId, group);
      }
    } finally {
      queue.running -= 1;
      if (queue.pending.length === 0 && queue.running === 0) queues.delete(companyId);
    }
  }

  async function writeGroup(companyId: string, group: Pending[]): Promise<void> {
    for (let attempt = 0; group.length > 0; attempt++) {
      // An id sent by two requests of the group goes to the database once, for the first of them.
      const seen = new Set<string>();
      const merged: BatchEventWrite[] = [];
      const sentBy = group.map((p) =>
        p.writes.filter((w) => {
          if (seen.has(w.id)) return false;
          seen.add(w.id);
          merged.push(w);
          return true;
        }),
      );
      let outcome;
      try {
        outcome = await ingestRatedBatch(db, companyId, merged, clock.now());
        if (outcome.stale.length > 0) {
          // Requests rated against a changed contract start over; the others go again without them.
          const stale = new Set(outcome.stale);
          const error = new StaleContracts(outcome.stale);
          const [affected, rest] = partition(group, (p) => p.writes.some((w) => stale.has(w.contractId)));
          for (const p of affected) p.reject(error);
          group = rest;
          continue;
        }
        if (outcome.missing.length > 0) {
          if (attempt >= 3) throw new Error("draft invoices could not be created");
          const wanted = outcome.missing.map((m) =>
            group.find((p) => p.writes.some((w) => w.contractId === m.contractId && w.periodStart === m.periodStart))!.wanted(m.contractId, m.periodStart),
          );
          await drafts.ensure(companyId, wanted);
          continue;
        }
      } catch (error) {
        // Requests of other processes sharing event ids can deadlock with this one; PostgreSQL aborts one.
        if ((error as { code?: string }).code === "40P01" && attempt < 5) continue;
        for (const p of group) p.reject(error);
        return;
      }
      // A request's duplicates: its ids that this call did not store (stored before, or sent by an
      // earlier request of the group).
      const stored = outcome.stored === "all" ? null : new Set(outcome.stored);
      group.forEach((p, i) => {
        const mine = new Set<string>();
        for (const w of sentBy[i]!) if (stored === null || stored.has(w.id)) mine.add(w.id);
        const duplicates = new Set<string>();
        for (const w of p.writes) if (!mine.has(w.id)) duplicates.add(w.id);
        p.resolve(duplicates);
      });
      return;
    }
  }

  return {
    /** Stores a rated batch; resolves with the ids that were stored already (duplicates). */
    write(companyId: string, writes: BatchEventWrite[], wanted: Pending["wanted"]): Promise<Set<string>> {
      return new Promise((resolve, reject) => {
        let queue = queues.get(companyId);
        if (!queue) queues.set(companyId, (queue = { pending: [], running: 0 }));
        queue.pending.push({ writes, wanted, resolve, reject });
        if (queue.running < callsInFlight) void drain(companyId, queue);
      });
    },
  };
}

export type BatchWriter = ReturnType<typeof createBatchWriter>;

function partition<T>(items: T[], test: (item: T) => boolean): [T[], T[]] {
  const yes: T[] = [];
  const no: T[] = [];
  for (const item of items) (test(item) ? yes : no).push(item);
  return [yes, no];
}
