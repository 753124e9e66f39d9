import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, it } from "node:test";
import { pathToFileURL } from "node:url";
import { type LaunchedProcess, LAUNCHER_NICE, launch, launcherPid, startLauncher } from "./launcher.js";

const folder = mkdtempSync(join(tmpdir(), "launcher-"));
after(() => rmSync(folder, { recursive: true, force: true }));
// A child that answers every message with its parent's process id, its niceness and what it was sent.
const echo = pathToFileURL(join(folder, "echo.mjs"));
writeFileSync(
  echo,
  `import { getPriority } from "node:os";
  process.on("message", (message) => process.send({ ppid: process.ppid, nice: getPriority(), message }));
  process.on("disconnect", () => process.exit(0));`,
);

const next = (child: LaunchedProcess, event: string) =>
  new Promise<unknown[]>((resolve) => child.once(event, (...args: unknown[]) => resolve(args)));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describe("the launcher", () => {
  it("starts children that are its own, not the service's, at its priority, and relays messages both ways intact", async () => {
    startLauncher();
    const child = launch(echo);
    const [pid] = await next(child, "spawn");
    assert.equal(typeof pid, "number");
    const bytes = new Uint8Array([0, 1, 254, 255]);
    const answer = next(child, "message");
    child.send({ bytes, when: new Date("2026-12-07T00:00:00Z") });
    const [reply] = (await answer) as [{ ppid: number; nice: number; message: { bytes: Uint8Array; when: Date } }];
    // Its parent is the launcher: the service's own event loop never waited on its fork.
    assert.equal(reply.ppid, launcherPid());
    assert.notEqual(reply.ppid, process.pid);
    if (existsSync(`/proc/${process.pid}/stat`)) assert.equal(reply.nice, LAUNCHER_NICE);
    // Where Linux schedules each session as a group, the child's group is the launcher's, not the service's, and
    // is as nice: its niceness then counts against other sessions (a database) too.
    if (
      existsSync(`/proc/${process.pid}/autogroup`) &&
      existsSync("/proc/sys/kernel/sched_autogroup_enabled") &&
      readFileSync("/proc/sys/kernel/sched_autogroup_enabled", "utf8").trim() === "1"
    ) {
      const group = (pid: number) => readFileSync(`/proc/${pid}/autogroup`, "utf8").trim();
      assert.notEqual(group(pid as number).split(" ")[0], group(process.pid).split(" ")[0]);
      assert.match(group(pid as number), new RegExp(` nice ${LAUNCHER_NICE}$`));
    }
    assert.deepEqual(reply.message.bytes, bytes);
    assert.equal(reply.message.when.toISOString(), "2026-12-07T00:00:00.000Z");
    const exit = next(child, "exit");
    child.kill();
    const [, signal] = await exit;
    assert.equal(signal, "SIGKILL");
    assert.equal(child.exited, true);
  });

  it("reports a child whose module cannot load as exited with its failure code, not silence", async () => {
    const child = launch(pathToFileURL(join(folder, "no-such-file.mjs")));
    const [code] = await next(child, "exit");
    assert.notEqual(code, 0);
  });

  it("when it dies, reports every child it started as exited, the children end, and the next launch starts a new launcher", async () => {
    const child = launch(echo);
    const [pid] = (await next(child, "spawn")) as [number];
    const first = launcherPid();
    assert.ok(first !== undefined);
    const exit = next(child, "exit");
    process.kill(first, "SIGKILL");
    await exit;
    // Its channel closed, the child leaves too (within the time a kernel takes to tell it).
    await until(() => !alive(pid) || zombie(pid));
    const again = launch(echo);
    const [, ...rest] = await Promise.all([next(again, "spawn"), next(again, "message"), again.send("hello")]);
    assert.deepEqual((rest[0] as [{ message: string }])[0].message, "hello");
    assert.notEqual(launcherPid(), first);
    again.kill();
  });
});

function zombie(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]!.startsWith("Z");
  } catch {
    return false;
  }
}

function until(condition: () => boolean): Promise<void> {
  return new Promise((resolve) => {
    const check = () => (condition() ? resolve() : setTimeout(check, 10));
    check();
  });
}
