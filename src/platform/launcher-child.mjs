// The launcher process (launcher.ts): a small Node process that starts the service's child processes for it and
// relays their messages both ways. fork() copies the page tables of the process that calls it, and the thread
// that calls it waits meanwhile: from this process (tens of MB) that is well under a millisecond, where from the
// service (hundreds of MB) it held every request for 14–24 ms per child. No rule of the service lives here: it
// starts what it is told, forwards what it is given, and kills what it is told to.
//
// Requests (from the service): { op: "spawn", id, module, execArgv, stderr }, { op: "send", id, message },
// { op: "kill", id }. Reports (to the service): { op: "spawned", id, pid }, { op: "message", id, message },
// { op: "exit", id, code, signal, error? } (error: the child could not be started). When the service is gone (its channel closes) every child is killed and the
// launcher exits: nothing it started outlives the service.
import { fork } from "node:child_process";
import { writeFileSync } from "node:fs";
import { setPriority } from "node:os";

// The niceness the service gives this process (its first argument): every child forked from here starts with it.
// The service starts this process in a session of its own (setsid), and where Linux groups the scheduling of each
// session (autogroup, /proc/sys/kernel/sched_autogroup_enabled) the group gets the niceness too: there a process's
// own niceness counts only against its own session, so children at nice 19 in the service's session still took
// an equal share of the cores from PostgreSQL, a session of its own. Where autogroups are off, or the file is
// absent, each process's niceness is what counts.
const nice = Number(process.argv[2]);
if (Number.isInteger(nice)) {
  try {
    setPriority(nice);
  } catch {
    // Not allowed here: the service renices each child itself all the same.
  }
  try {
    writeFileSync("/proc/self/autogroup", String(nice));
  } catch {
    // No autogroups here (or not allowed): the processes' own niceness is what counts.
  }
}

/** @type {Map<number, import("node:child_process").ChildProcess>} */
const children = new Map();

/** @param {unknown} report */
const report = (report) => {
  process.send?.(report);
};

/**
 * @param {{ op: "spawn", id: number, module: string, execArgv: string[], stderr: "inherit" | "ignore" }
 *   | { op: "send", id: number, message: unknown }
 *   | { op: "kill", id: number }} request
 */
function handle(request) {
  if (request.op === "spawn") {
    let child;
    try {
      child = fork(new URL(request.module), [], {
        execArgv: request.execArgv,
        serialization: "advanced",
        stdio: ["ignore", "ignore", request.stderr, "ipc"],
      });
    } catch (error) {
      return report({ op: "exit", id: request.id, code: null, signal: null, error: String(error) });
    }
    children.set(request.id, child);
    report({ op: "spawned", id: request.id, pid: child.pid });
    child.on("message", (message) => report({ op: "message", id: request.id, message }));
    let ended = false;
    /** @type {(code: number | null, signal: string | null, error?: string) => void} */
    const end = (code, signal, error) => {
      if (ended) return;
      ended = true;
      children.delete(request.id);
      report({ op: "exit", id: request.id, code, signal, error });
    };
    child.once("exit", (code, signal) => end(code, signal));
    // A child that could not be started (no memory, no such program) reports an error and may never exit.
    child.once("error", (error) => {
      child.kill("SIGKILL");
      end(null, null, String(error));
    });
    return;
  }
  const child = children.get(request.id);
  if (!child) return; // gone already: its exit was reported
  if (request.op === "send") {
    // A child that died before it took the message: its exit, reported, says so.
    child.send(/** @type {import("node:child_process").Serializable} */ (request.message), (error) => {
      if (error) child.kill("SIGKILL");
    });
  } else if (request.op === "kill") child.kill("SIGKILL");
}

process.on("message", handle);
process.on("disconnect", () => {
  for (const child of children.values()) child.kill("SIGKILL");
  process.exit(0);
});
report({ op: "ready" });
