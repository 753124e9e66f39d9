import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { runBudgetedChild } from "./budgeted-child.js";

// Children written for the test: one that works for `ms` of its own CPU time when asked, answers and exits; one
// that spins for ever.
const folder = mkdtempSync(join(tmpdir(), "budgeted-child-"));
after(() => rmSync(folder, { recursive: true, force: true }));
const worker = pathToFileURL(join(folder, "worker.mjs"));
writeFileSync(
  worker,
  `process.once("message", ({ ms }) => {
    const start = process.cpuUsage();
    let spent = 0;
    while (spent < ms * 1000) {
      const used = process.cpuUsage(start);
      spent = used.user + used.system;
    }
    process.send({ done: true }, () => process.exit(0));
  });`,
);
const spinner = pathToFileURL(join(folder, "spinner.mjs"));
writeFileSync(spinner, "for (;;) {}");

describe("a child under a CPU-time budget", () => {
  it("is slowed, not ended, while it uses no CPU: stopped for longer than its whole CPU budget, it still answers", async () => {
    const answers: unknown[] = [];
    const child = runBudgetedChild(worker, {
      budget: { cpuMs: 1_000, wallMs: 60_000, rssBytes: 512 * 1024 * 1024 },
      onMessage: (message) => answers.push(message),
    });
    // Stopped at once (as a machine too busy to give it a core would leave it), for longer in wall time than its
    // CPU budget: a wall-clock budget of the same size would have ended it.
    child.send({ ms: 200 });
    await stop(child, "SIGSTOP");
    await sleep(1_500);
    await stop(child, "SIGCONT");
    assert.equal(await child.ended, "exited");
    assert.deepEqual(answers, [{ done: true }]);
  });

  it("is ended once it has spent its CPU budget", async () => {
    const child = runBudgetedChild(spinner, { budget: { cpuMs: 300, wallMs: 60_000, rssBytes: 512 * 1024 * 1024 } });
    assert.equal(await child.ended, "cpu");
    assert.ok(child.cpuMs() >= 300, `it used ${child.cpuMs()} ms of CPU`);
  });

  it("is ended by the wall-clock backstop when it stays stopped", async () => {
    const child = runBudgetedChild(worker, { budget: { cpuMs: 60_000, wallMs: 300, rssBytes: 512 * 1024 * 1024 } });
    await stop(child, "SIGSTOP");
    assert.equal(await child.ended, "wall");
  });
});

async function stop(child: ReturnType<typeof runBudgetedChild>, signal: "SIGSTOP" | "SIGCONT") {
  const pid = await child.started;
  assert.ok(pid !== undefined);
  process.kill(pid, signal);
}

describe("a child's priority", () => {
  it("is given to every thread of the child when it is lowered while it runs, not to its main thread alone", async (t) => {
    if (!existsSync(`/proc/${process.pid}/task`)) return t.skip("no /proc on this system");
    // A child that answers once it has worked a while, and stays until it is ended.
    const stays = pathToFileURL(join(folder, "stays.mjs"));
    writeFileSync(
      stays,
      `process.once("message", () => { const s = Date.now(); while (Date.now() - s < 300); process.send({ done: true }); });`,
    );
    let answered = () => {};
    const answer = new Promise<void>((resolve) => (answered = resolve));
    const child = runBudgetedChild(stays, {
      budget: { cpuMs: 10_000, wallMs: 60_000, rssBytes: 512 * 1024 * 1024 },
      nice: 12,
      onMessage: () => answered(),
    });
    child.send({});
    await answer;
    const pid = child.pid!;
    // Field 19 of /proc/<pid>/task/<tid>/stat (the 17th after the command name): the thread's nice value.
    const niceOf = (tid: string) =>
      Number(readFileSync(`/proc/${pid}/task/${tid}/stat`, "utf8").split(") ")[1]!.split(" ")[16]);
    const threads = readdirSync(`/proc/${pid}/task`);
    assert.ok(threads.length > 1, "Node starts threads of its own");
    assert.deepEqual([...new Set(threads.map(niceOf))], [12]);
    // Lowered once it runs (a reading found slow): V8's and libuv's threads, started long before, follow.
    child.renice(17);
    assert.deepEqual([...new Set(readdirSync(`/proc/${pid}/task`).map(niceOf))], [17]);
    child.kill();
    await child.ended;
  });
});
