/**
 * The child pool (child-pool.ts) with a child of the tests' own (test/support/pool-test-child.ts): what crosses
 * the channel, the queue's order between keys proven with jobs that wait until the test lets them go (no sleeps,
 * no wall-clock budget), a child that dies mid-job or blows its CPU or memory budget replaced by the next job,
 * a job that throws refused without losing its child, and a key past its bound refused at once.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { ChildJobError, type ChildPool, type ChildPoolOptions, createChildPool } from "./child-pool.js";
import { QueueFullError } from "./fair-queue.js";

const entry = new URL("../../test/support/pool-test-child.ts", import.meta.url);
const options = (overrides: Partial<ChildPoolOptions> = {}): ChildPoolOptions => ({
  entry,
  children: 2,
  queue: { runningPerKey: 1, perKey: 4, waiting: 16 },
  budget: { cpuMs: 60_000, wallMs: 600_000, rssBytes: 1024 * 1024 * 1024, heapMb: 128 },
  nice: 10,
  ...overrides,
});

/** A local socket that hold jobs connect to: `connected(tag)` settles when the job with that tag runs, `release(tag)` ends it. */
let server: Server;
let folder: string;
const sockets = new Map<string, Socket>();
const waiters = new Map<string, () => void>();
before(async () => {
  folder = mkdtempSync(join(tmpdir(), "child-pool-"));
  server = createServer((socket) => {
    socket.once("data", (data) => {
      const tag = data.toString();
      sockets.set(tag, socket);
      waiters.get(tag)?.();
    });
  });
  await new Promise<void>((resolve) => server.listen(join(folder, "hold.sock"), resolve));
});
after(() => {
  server.close();
  rmSync(folder, { recursive: true, force: true });
});
const holdInput = (tag: string) => ({ socket: join(folder, "hold.sock"), tag });
const connected = (tag: string) =>
  sockets.has(tag) ? Promise.resolve() : new Promise<void>((resolve) => waiters.set(tag, resolve));
const release = (tag: string) => sockets.get(tag)!.write("go");
const exited = (pid: number) =>
  new Promise<void>((resolve) => {
    const check = () => {
      try {
        process.kill(pid, 0);
        setImmediate(check);
      } catch {
        resolve();
      }
    };
    check();
  });

/** Settles once the pool has let go of every one of `pids` (it hears of a child's exit on the next turns of the loop). */
const gone = (pool: ChildPool, pids: number[]) =>
  new Promise<void>((resolve) => {
    const check = () => (pool.pids().some((pid) => pids.includes(pid)) ? setImmediate(check) : resolve());
    check();
  });

describe("child pool", () => {
  let pool: ChildPool;
  before(() => {
    pool = createChildPool(options());
  });
  after(() => pool.close());

  it("passes Dates, Uint8Arrays and nested data through the channel as they are", async () => {
    const input = { at: new Date("2026-03-15T12:00:00.000Z"), bytes: new Uint8Array([1, 2, 3]), list: [{ a: "x" }] };
    const echoed = await pool.run<typeof input>("a", "echo", input);
    assert.ok(echoed.at instanceof Date);
    assert.equal(echoed.at.toISOString(), input.at.toISOString());
    assert.deepEqual([...echoed.bytes], [1, 2, 3]);
    assert.deepEqual(echoed.list, input.list);
  });

  it("serves another key's one job while one key's many wait, each key in turn", async () => {
    const held = ["a1", "a2", "a3"].map((tag) => pool.run<string>("key-a", "hold", holdInput(tag)));
    await connected("a1");
    // key-a runs one job at a time (runningPerKey 1): its other two wait, and key-b's one job takes the other child.
    assert.deepEqual(pool.load(), { running: 1, waiting: 2 });
    assert.equal(await pool.run("key-b", "echo", "b"), "b");
    assert.deepEqual(pool.load(), { running: 1, waiting: 2 }, "key-a's jobs are all still where they were");
    release("a1");
    await connected("a2");
    release("a2");
    await connected("a3");
    release("a3");
    assert.deepEqual(await Promise.all(held), ["a1", "a2", "a3"]);
  });

  it("takes turns between keys: a key's second job waits for another key's first", async () => {
    const one = createChildPool(options({ children: 1 }));
    try {
      const a1 = one.run("a", "hold", holdInput("t-a1"));
      await connected("t-a1");
      const a2 = one.run("a", "hold", holdInput("t-a2"));
      const a3 = one.run("a", "hold", holdInput("t-a3"));
      const b1 = one.run("b", "hold", holdInput("t-b1"));
      release("t-a1");
      await connected("t-a2");
      release("t-a2");
      // a3 was queued before b1 came, but b's turn comes first.
      await connected("t-b1");
      assert.equal(sockets.has("t-a3"), false, "a's third job has not started");
      assert.deepEqual(one.load(), { running: 1, waiting: 1 });
      release("t-b1");
      await connected("t-a3");
      release("t-a3");
      await Promise.all([a1, a2, a3, b1]);
    } finally {
      one.close();
    }
  });

  it("refuses a key's job past its bound at once, not another key's", async () => {
    const turns = [1, 2, 3, 4].map(() => pool.hold("full"));
    await turns[0]!.started;
    await assert.rejects(
      pool.run("full", "echo", 1),
      (error) => error instanceof QueueFullError && error.bound === "key",
    );
    assert.equal(pool.refusal("full"), "key");
    assert.equal(pool.refusal("other"), undefined);
    for (const turn of turns) turn.release();
    await Promise.all(turns.map((turn) => turn.started));
  });

  it("refuses a job that throws with its message, and keeps its child", async () => {
    const [before] = await Promise.all([pool.run<number>("c", "pid", null)]);
    await assert.rejects(
      pool.run("c", "fail", null),
      (error) => error instanceof ChildJobError && error.reason === "failed" && error.message === "the job refused",
    );
    assert.ok(pool.pids().includes(before!));
  });

  it("refuses the job of a child that dies mid-job, and runs the next in a new child", async () => {
    const job = pool.run("d", "hold", holdInput("dies"));
    await connected("dies");
    const killed = pool.pids();
    for (const pid of killed) process.kill(pid, "SIGKILL");
    await assert.rejects(job, (error) => error instanceof ChildJobError && error.reason === "exited");
    await Promise.all(killed.map(exited));
    await gone(pool, killed);
    const next = await pool.run<number>("d", "pid", null);
    assert.ok(!killed.includes(next), "a new child");
    assert.equal(await pool.run("d", "echo", "after"), "after");
    await assert.rejects(
      pool.run("d", "exit", null),
      (error) => error instanceof ChildJobError && error.reason === "exited",
    );
    assert.equal(await pool.run("d", "echo", "again"), "again");
  });

  it("kills a child over its CPU or memory budget, refuses its job, and replaces it", async () => {
    const tight = createChildPool(
      options({ budget: { cpuMs: 300, wallMs: 600_000, rssBytes: 256 * 1024 * 1024, heapMb: 128 } }),
    );
    try {
      await assert.rejects(
        tight.run("e", "spin", null),
        (error) => error instanceof ChildJobError && error.reason === "cpu",
      );
      await assert.rejects(
        tight.run("e", "grow", null),
        (error) => error instanceof ChildJobError && error.reason === "memory",
      );
      assert.equal(await tight.run("e", "echo", "alive"), "alive");
    } finally {
      tight.close();
    }
  });
});
