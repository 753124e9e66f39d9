import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createFairQueue, type FairQueueLimits, QueueFullError, type Turn } from "./fair-queue.js";

/** A queue of fake jobs, each finished by hand: which jobs started, in order, and how each one ended. */
function harness(limits: FairQueueLimits) {
  const queue = createFairQueue(limits);
  const started: string[] = [];
  const finishers = new Map<string, () => void>();
  const outcomes = new Map<string, string>();
  const submit = (key: string, name: string) => {
    void queue
      .run(key, () => {
        started.push(name);
        return new Promise<string>((resolve) => finishers.set(name, () => resolve(name)));
      })
      .then(
        () => outcomes.set(name, "done"),
        (error: unknown) =>
          outcomes.set(name, error instanceof QueueFullError ? `refused:${error.bound}` : `failed:${String(error)}`),
      );
  };
  // Settles the job and lets the queue's promise callbacks run (they are microtasks; a macrotask follows them all).
  const finish = async (name: string) => {
    finishers.get(name)!();
    await new Promise((resolve) => setImmediate(resolve));
  };
  const settle = () => new Promise((resolve) => setImmediate(resolve));
  return { queue, started, outcomes, submit, finish, settle };
}

describe("fair queue", () => {
  it("serves keys in turn: one key's many jobs delay another key's first job by at most one job", async () => {
    const q = harness({ slots: 1, runningPerKey: 1, perKey: 10, waiting: 100 });
    for (const name of ["a1", "a2", "a3", "a4"]) q.submit("A", name);
    q.submit("B", "b1");
    q.submit("B", "b2");
    q.submit("C", "c1");
    await q.settle();
    assert.deepEqual(q.started, ["a1"]);
    for (const name of ["a1", "a2", "b1", "c1", "a3", "b2"]) await q.finish(name);
    // A, then B and C in the order they first waited, then round again: A, B, A.
    assert.deepEqual(q.started, ["a1", "a2", "b1", "c1", "a3", "b2", "a4"]);
  });

  it("runs at most `runningPerKey` of a key's jobs at once, leaving the other slots to other keys", async () => {
    const q = harness({ slots: 2, runningPerKey: 1, perKey: 5, waiting: 100 });
    q.submit("A", "a1");
    q.submit("A", "a2");
    await q.settle();
    assert.deepEqual(q.started, ["a1"], "A's second job waits although a slot is free");
    assert.deepEqual(q.queue.load(), { running: 1, waiting: 1 });
    q.submit("B", "b1");
    await q.settle();
    assert.deepEqual(q.started, ["a1", "b1"], "B starts at once in the slot A may not take");
    await q.finish("b1");
    assert.deepEqual(q.started, ["a1", "b1"]);
    await q.finish("a1");
    assert.deepEqual(q.started, ["a1", "b1", "a2"]);
  });

  it("refuses a key's job past `perKey` (running and waiting), at once, and takes it again once one ended", async () => {
    const q = harness({ slots: 2, runningPerKey: 1, perKey: 2, waiting: 100 });
    q.submit("A", "a1");
    q.submit("A", "a2");
    q.submit("A", "a3");
    q.submit("B", "b1");
    await q.settle();
    assert.equal(q.outcomes.get("a3"), "refused:key");
    assert.deepEqual(q.started, ["a1", "b1"], "B is not refused for A's jobs");
    assert.equal(q.queue.refusal("A"), "key", "asked beforehand, A would be refused as its job was");
    assert.equal(q.queue.refusal("B"), undefined, "and B would be taken (one running, one more may wait)");
    await q.finish("a1");
    q.submit("A", "a4");
    await q.settle();
    assert.equal(q.outcomes.get("a4"), undefined, "queued: A has one running and one waiting again");
    assert.deepEqual(q.started, ["a1", "b1", "a2"]);
  });

  it("refuses any job that would wait past `waiting` over all keys; one that starts at once is never refused for it", async () => {
    const q = harness({ slots: 1, runningPerKey: 1, perKey: 5, waiting: 2 });
    const table: Array<[key: string, name: string, outcome: string | undefined]> = [
      ["A", "a1", undefined], // runs
      ["A", "a2", undefined], // waits (1)
      ["B", "b1", undefined], // waits (2)
      ["C", "c1", "refused:total"],
      ["A", "a3", "refused:total"],
    ];
    for (const [key, name] of table) q.submit(key, name);
    await q.settle();
    for (const [, name, outcome] of table) assert.equal(q.outcomes.get(name), outcome, name);
    assert.deepEqual(q.queue.load(), { running: 1, waiting: 2 });
  });

  it("passes a job's result and its failure through, and frees its slot either way", async () => {
    const queue = createFairQueue({ slots: 1, runningPerKey: 1, perKey: 3, waiting: 3 });
    await assert.rejects(
      queue.run("A", () => Promise.reject(new Error("boom"))),
      /boom/,
    );
    await assert.rejects(
      queue.run("A", () => {
        throw new Error("sync");
      }),
      /sync/,
    );
    assert.equal(await queue.run("A", async () => 42), 42);
    assert.deepEqual(queue.load(), { running: 0, waiting: 0 });
  });

  it("serves long jobs part by part: between its parts a job passes its turn, and every key waits one part, not a whole job", async () => {
    const queue = createFairQueue({ slots: 1, runningPerKey: 1, perKey: 5, waiting: 10 });
    const parts: string[] = [];
    const gates: Array<() => void> = [];
    const next = async () => {
      while (gates.length === 0) await new Promise((resolve) => setImmediate(resolve));
      gates.shift()!();
      await new Promise((resolve) => setImmediate(resolve));
    };
    // A job of `count` parts: each part waits for the test to let it end, then the job passes its turn.
    const job = (name: string, count: number) => async (turn: Turn) => {
      for (let part = 1; part <= count; part++) {
        if (part > 1) await turn.pass();
        parts.push(`${name}${part}`);
        await new Promise<void>((resolve) => gates.push(resolve));
      }
    };
    const done = [
      queue.run("A", job("a", 3)),
      queue.run("B", job("b", 2)),
      queue.run("C", job("c", 1)),
      queue.run("A", job("x", 1)),
    ];
    assert.deepEqual(queue.load(), { running: 1, waiting: 3 });
    for (let k = 0; k < 7; k++) await next();
    await Promise.all(done);
    // A's first part, then B and C in turn, A's next part (its own later job after it), B's last, A's last, A's next job.
    assert.deepEqual(parts, ["a1", "b1", "c1", "a2", "b2", "a3", "x1"]);
    assert.deepEqual(queue.load(), { running: 0, waiting: 0 });
  });

  it("keeps the slot for a job when only its own key's jobs wait: its next part runs at once", async () => {
    const queue = createFairQueue({ slots: 1, runningPerKey: 1, perKey: 5, waiting: 10 });
    const order: string[] = [];
    const contended: boolean[] = [];
    const first = queue.run("A", async (turn) => {
      order.push("a1 part 1");
      await new Promise((resolve) => setImmediate(resolve));
      contended.push(turn.contended());
      await turn.pass();
      order.push("a1 part 2");
    });
    const second = queue.run("A", async () => {
      order.push("a2");
    });
    await Promise.all([first, second]);
    assert.deepEqual(contended, [false]);
    assert.deepEqual(order, ["a1 part 1", "a1 part 2", "a2"]);
  });

  it("takes a waiting job out of the queue when its signal is aborted, and never runs it", async () => {
    const q = harness({ slots: 1, runningPerKey: 1, perKey: 5, waiting: 1 });
    q.submit("A", "a1");
    const controller = new AbortController();
    let ran = false;
    const waiting = q.queue.run(
      "B",
      async () => {
        ran = true;
      },
      { signal: controller.signal },
    );
    assert.deepEqual(q.queue.load(), { running: 1, waiting: 1 });
    assert.equal(q.queue.refusal("C"), "total");
    controller.abort(new Error("gave up"));
    await assert.rejects(waiting, /gave up/);
    assert.deepEqual(q.queue.load(), { running: 1, waiting: 0 });
    assert.equal(q.queue.refusal("C"), undefined, "its room in the queue is free again");
    await q.finish("a1");
    assert.equal(ran, false);
    assert.deepEqual(q.queue.load(), { running: 0, waiting: 0 });
  });

  it("ends a job's wait between its parts when its signal is aborted: the job holds no slot and the next key runs", async () => {
    const q = harness({ slots: 1, runningPerKey: 1, perKey: 5, waiting: 10 });
    const controller = new AbortController();
    let passed: string | undefined;
    let release: () => void = () => {};
    const long = q.queue.run("A", async (turn) => {
      await new Promise<void>((resolve) => {
        release = resolve;
      });
      await turn.pass(controller.signal).catch((error: Error) => {
        passed = error.message;
      });
      return "partly";
    });
    q.submit("B", "b1");
    await q.settle();
    release();
    await q.settle();
    assert.deepEqual(q.started, ["b1"], "A passed its turn to B");
    controller.abort(new Error("too long"));
    assert.equal(await long, "partly");
    assert.equal(passed, "too long");
    assert.deepEqual(q.queue.load(), { running: 1, waiting: 0 });
    await q.finish("b1");
    assert.deepEqual(q.queue.load(), { running: 0, waiting: 0 });
  });
});
