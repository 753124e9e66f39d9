// Jobs that share a few slots, queued by an opaque key and served in turn between keys (round-robin), so that
// one key's many jobs cannot keep another key's one job waiting. What a key stands for is the caller's affair.
// Bounded everywhere: slots at once, jobs a key may run at once, jobs a key may have running or waiting,
// and jobs waiting over all keys; a job past a bound is refused at once (QueueFullError), never queued.
// A long job may be served in parts: between two parts it passes its turn (`turn.pass()`), and when a job of
// another key is waiting for a slot that one runs first, so that another key waits for one part, not a whole job.

export interface FairQueueLimits {
  /** Jobs running at once, over all keys. */
  slots: number;
  /** Jobs one key may run at once: below `slots`, a slot is always left for other keys. */
  runningPerKey: number;
  /** Jobs one key may have running or waiting; one more is refused. */
  perKey: number;
  /**
   * Jobs waiting for their first turn over all keys; one more is refused. (A job that passed its turn waits
   * again without being counted against this: it was taken already, and is never refused halfway.)
   */
  waiting: number;
}

/** A job refused by a bound: its key's (`key`), or the queue's as a whole (`total`). */
export class QueueFullError extends Error {
  constructor(readonly bound: "key" | "total") {
    super(bound === "key" ? "This key has as many jobs as it may queue" : "The queue is full");
    this.name = "QueueFullError";
  }
}

/** A running job's hold on its slot. */
export interface Turn {
  /** Whether a job of another key is waiting for the slot this job holds: the moment to pass the turn. */
  contended(): boolean;
  /**
   * Gives the slot to the next key in turn when another key's job is waiting for it, and resolves when this job's
   * turn comes again (its key goes to the back of the round); resolves at once when no other key waits. Rejects
   * with `signal`'s reason if it is aborted first: the job then holds no slot, and should end.
   */
  pass(signal?: AbortSignal): Promise<void>;
}

export interface FairQueue {
  /**
   * Runs `job` when its turn comes; rejects with QueueFullError, without running it, when over a bound, and with
   * `signal`'s reason, without running it, when `signal` is aborted before its turn.
   */
  run<T>(key: string, job: (turn: Turn) => Promise<T>, options?: { signal?: AbortSignal }): Promise<T>;
  /** The bound a job of `key` would be refused by if it came now, or undefined when it would be taken. */
  refusal(key: string): QueueFullError["bound"] | undefined;
  /** Jobs running and waiting now, over all keys. */
  load(): { running: number; waiting: number };
}

interface KeyState {
  running: number;
  /** Jobs waiting for a slot, in the order they take one; each takes it (counted as running) when called. */
  waiting: Array<() => void>;
}

export function createFairQueue(limits: FairQueueLimits): FairQueue {
  const keys = new Map<string, KeyState>();
  // Keys with a waiting job, in the order they are served: the one served goes to the back.
  const turns: string[] = [];
  let running = 0;
  let waiting = 0;
  // Of `waiting`, the jobs that passed their turn (they do not count against `limits.waiting`).
  let resuming = 0;

  const stateOf = (key: string) => keys.get(key) ?? { running: 0, waiting: [] };
  const mayRun = (key: string) => keys.get(key)!.running < limits.runningPerKey;

  // After every change: while a slot is free, start the first waiting job of the first key in turn that may run one.
  function dispatch() {
    while (running < limits.slots) {
      const index = turns.findIndex(mayRun);
      if (index === -1) return;
      const key = turns[index]!;
      const state = keys.get(key)!;
      turns.splice(index, 1);
      const start = state.waiting.shift()!;
      if (state.waiting.length > 0) turns.push(key);
      waiting--;
      start();
    }
  }

  // Never a free slot while a job waits that could take it (dispatch runs after every change): start now, or wait.
  const startsNow = (state: KeyState) => running < limits.slots && state.running < limits.runningPerKey;

  function refusal(state: KeyState): QueueFullError["bound"] | undefined {
    if (state.running + state.waiting.length >= limits.perKey) return "key";
    if (!startsNow(state) && waiting - resuming >= limits.waiting) return "total";
    return undefined;
  }

  function take(key: string, state: KeyState) {
    running++;
    state.running++;
    keys.set(key, state);
  }

  function release(key: string, state: KeyState) {
    running--;
    state.running--;
    if (state.running === 0 && state.waiting.length === 0) keys.delete(key);
    dispatch();
  }

  /** Queues `start` for `key` (first among its own jobs when `first`); resolves once it holds a slot. */
  function wait(key: string, state: KeyState, first: boolean, signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const start = () => {
        signal?.removeEventListener("abort", abort);
        if (first) resuming--;
        take(key, state);
        resolve();
      };
      const abort = () => {
        const index = state.waiting.indexOf(start);
        if (index === -1) return;
        state.waiting.splice(index, 1);
        waiting--;
        if (first) resuming--;
        if (state.waiting.length === 0) turns.splice(turns.indexOf(key), 1);
        if (state.running === 0 && state.waiting.length === 0) keys.delete(key);
        reject(signal!.reason);
      };
      signal?.addEventListener("abort", abort, { once: true });
      keys.set(key, state);
      if (first) {
        state.waiting.unshift(start);
        resuming++;
        // Behind every key waiting now: the key had its turn.
        const index = turns.indexOf(key);
        if (index !== -1) turns.splice(index, 1);
        turns.push(key);
      } else {
        if (state.waiting.length === 0) turns.push(key);
        state.waiting.push(start);
      }
      waiting++;
    });
  }

  return {
    refusal: (key) => refusal(stateOf(key)),
    async run<T>(key: string, job: (turn: Turn) => Promise<T>, options: { signal?: AbortSignal } = {}): Promise<T> {
      const state = stateOf(key);
      const bound = refusal(state);
      if (bound) throw new QueueFullError(bound);
      options.signal?.throwIfAborted();
      if (startsNow(state)) take(key, state);
      else await wait(key, state, false, options.signal);
      let holding = true;
      const turn: Turn = {
        contended: () => holding && turns.some((other) => other !== key && mayRun(other)),
        async pass(signal) {
          if (!turn.contended()) return;
          signal?.throwIfAborted();
          // Queued before the slot is let go, so that the key's state lives on while it waits.
          const resumed = wait(key, state, true, signal);
          holding = false;
          release(key, state);
          await resumed;
          holding = true;
        },
      };
      try {
        // The slot is free before the caller hears of the outcome (the `finally` runs first).
        return await job(turn);
      } finally {
        if (holding) release(key, state);
      }
    },
    load: () => ({ running, waiting }),
  };
}
