// Jobs that share a few slots, queued by an opaque key and served in turn between keys (round-robin), so that
// one key's many jobs cannot keep another key's one job waiting. What a key stands for is the caller's affair.
// Bounded everywhere: slots at once, jobs a key may run at once, jobs a key may have running or waiting,
// and jobs waiting over all keys; a job past a bound is refused at once (QueueFullError), never queued.

export interface FairQueueLimits {
  /** Jobs running at once, over all keys. */
  slots: number;
  /** Jobs one key may run at once: below `slots`, a slot is always left for other keys. */
  runningPerKey: number;
  /** Jobs one key may have running or waiting; one more is refused. */
  perKey: number;
  /** Jobs waiting over all keys; one more is refused. */
  waiting: number;
}

/** A job refused by a bound: its key's (`key`), or the queue's as a whole (`total`). */
export class QueueFullError extends Error {
  constructor(readonly bound: "key" | "total") {
    super(bound === "key" ? "This key has as many jobs as it may queue" : "The queue is full");
    this.name = "QueueFullError";
  }
}

export interface FairQueue {
  /** Runs `job` when its turn comes; rejects with QueueFullError, without running it, when over a bound. */
  run<T>(key: string, job: () => Promise<T>): Promise<T>;
  /** The bound a job of `key` would be refused by if it came now, or undefined when it would be taken. */
  refusal(key: string): QueueFullError["bound"] | undefined;
  /** Jobs running and waiting now, over all keys. */
  load(): { running: number; waiting: number };
}

interface KeyState {
  running: number;
  waiting: Array<() => void>;
}

export function createFairQueue(limits: FairQueueLimits): FairQueue {
  const keys = new Map<string, KeyState>();
  // Keys with a waiting job, in the order they are served: the one served goes to the back.
  const turns: string[] = [];
  let running = 0;
  let waiting = 0;

  // After every change: while a slot is free, start the first waiting job of the first key in turn that may run one.
  function dispatch() {
    while (running < limits.slots) {
      const index = turns.findIndex((key) => keys.get(key)!.running < limits.runningPerKey);
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
    if (!startsNow(state) && waiting >= limits.waiting) return "total";
    return undefined;
  }

  return {
    refusal: (key) => refusal(keys.get(key) ?? { running: 0, waiting: [] }),
    run<T>(key: string, job: () => Promise<T>): Promise<T> {
      const state = keys.get(key) ?? { running: 0, waiting: [] };
      const bound = refusal(state);
      if (bound) return Promise.reject(new QueueFullError(bound));
      const now = startsNow(state);
      keys.set(key, state);
      return new Promise<T>((resolve, reject) => {
        const start = () => {
          running++;
          state.running++;
          let result: Promise<T>;
          try {
            result = job();
          } catch (error) {
            result = Promise.reject(error);
          }
          // The slot is free before the caller hears of the outcome.
          const release = () => {
            running--;
            state.running--;
            if (state.running === 0 && state.waiting.length === 0) keys.delete(key);
            dispatch();
          };
          result.then(
            (value) => {
              release();
              resolve(value);
            },
            (error: unknown) => {
              release();
              reject(error);
            },
          );
        };
        if (now) return start();
        if (state.waiting.length === 0) turns.push(key);
        state.waiting.push(start);
        waiting++;
      });
    },
    load: () => ({ running, waiting }),
  };
}
