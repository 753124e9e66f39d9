import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { setTimeout as sleep } from "node:timers/promises";
import { runBudgetedChild } from "./budgeted-child.js";

// Children written for the test: one that works for `ms` of its own CPU time when asked, answers and exits; one
// that spins for ever.
const folder = mkdtempSync(join(tmpdir(), "budgeted-child-"));
after(() => rmSync(folder, { recursive: true, force: true }));
const worker = join(folder, "worker.mjs");
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
const spinner = join(folder, "spinner.mjs");
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
    stop(child, "SIGSTOP");
    await sleep(1_500);
    stop(child, "SIGCONT");
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
    stop(child, "SIGSTOP");
    assert.equal(await child.ended, "wall");
  });
});

function stop(child: ReturnType<typeof runBudgetedChild>, signal: "SIGSTOP" | "SIGCONT") {
  assert.ok(child.pid !== undefined);
  process.kill(child.pid, signal);
}
