// Where the service's child processes come from: one small, long-lived launcher process (launcher-child.mjs) that
// forks them on the service's behalf and relays their messages. Starting a child from the service itself stops
// its event loop: fork() copies the caller's page tables, 14–24 ms at the service's 500 MB resident set, and the
// readers start a child per file and per OCR page, so a company sending scan after scan held every other
// company's requests in a train of such pauses. The launcher is forked once (early, while the service is small:
// `startLauncher`), its own forks are cheap, and the service's only work per child is a few small messages.
//
// A launched child looks to its callers much like Node's ChildProcess: `pid` (once started), `send`, the events
// "spawn", "message" and "exit", `kill` (SIGKILL), `ref`/`unref`. The launcher runs at LAUNCHER_NICE, so every
// child starts at that CPU priority (its callers may lower it further, never raise it without privilege). If the
// launcher dies, every child it started is reported exited (they end: their channel closes) and the next launch
// starts a new launcher. No business rule here.
import { type ChildProcess, fork } from "node:child_process";
import { EventEmitter } from "node:events";

/** The launcher's niceness, which its children start with: below the service, as all of them run heavy work. */
export const LAUNCHER_NICE = 10;

const launcherFile = new URL("./launcher-child.mjs", import.meta.url);

export interface LaunchOptions {
  /** Node's options for the child (a heap limit, a loader). */
  execArgv?: string[];
  /** Where the child's stderr goes: the service's own, or nowhere. */
  stderr?: "inherit" | "ignore";
}

type Report =
  | { op: "ready" }
  | { op: "spawned"; id: number; pid: number | undefined }
  | { op: "message"; id: number; message: unknown }
  | { op: "exit"; id: number; code: number | null; signal: string | null; error?: string };

type Request =
  | { op: "spawn"; id: number; module: string; execArgv: string[]; stderr: "inherit" | "ignore" }
  | { op: "send"; id: number; message: unknown }
  | { op: "kill"; id: number };

interface Launcher {
  process: ChildProcess;
  children: Map<number, LaunchedProcess>;
  /** Children that hold the service open (not `unref`'d) and not exited: the launcher is held open while any is. */
  referenced: Set<LaunchedProcess>;
}

let launcher: Launcher | undefined;
let nextId = 1;

/**
 * A child process started by the launcher. Events: "spawn" (pid), "message" (message), "exit" (code, signal,
 * startError), the last once, whether the child ended on its own or was killed (startError undefined) or could not
 * be started at all (startError says why).
 */
export class LaunchedProcess extends EventEmitter {
  /** The child's process id, once the launcher has started it (the "spawn" event). */
  pid: number | undefined;
  /** Whether the child has exited (or could not be started). */
  exited = false;

  constructor(
    private readonly owner: Launcher,
    readonly id: number,
  ) {
    super();
  }

  /** Whether messages can still reach the child. */
  get connected(): boolean {
    return !this.exited && this.owner.process.connected;
  }

  /** Sends a message to the child; `callback` gets an error if it could not leave this process. */
  send(message: unknown, callback?: (error: Error | null) => void): void {
    request(this.owner, { op: "send", id: this.id, message }, callback);
  }

  /** Kills the child (SIGKILL); its "exit" follows. */
  kill(): void {
    if (!this.exited) request(this.owner, { op: "kill", id: this.id });
  }

  /** The child holds the service open until it exits (the default, as Node's children). */
  ref(): void {
    if (this.exited) return;
    this.owner.referenced.add(this);
    holdOpen(this.owner);
  }

  /** The child no longer holds the service open. */
  unref(): void {
    this.owner.referenced.delete(this);
    holdOpen(this.owner);
  }

  /** @internal the launcher's reports, for this child */
  ended(code: number | null, signal: string | null, startError?: string): void {
    if (this.exited) return;
    this.exited = true;
    this.owner.children.delete(this.id);
    this.owner.referenced.delete(this);
    holdOpen(this.owner);
    this.emit("exit", code, signal, startError);
  }
}

function request(owner: Launcher, message: Request, callback?: (error: Error | null) => void): void {
  if (!owner.process.connected) {
    callback?.(new Error("the launcher is gone"));
    return;
  }
  owner.process.send(message as Parameters<ChildProcess["send"]>[0], (error) => callback?.(error ?? null));
}

/** The launcher holds the service open while one of its children does, as a child of the service's own would. */
function holdOpen(owner: Launcher): void {
  const channel = owner.process.channel as { ref?: () => void; unref?: () => void } | undefined | null;
  if (owner.referenced.size > 0) {
    owner.process.ref();
    channel?.ref?.();
  } else {
    owner.process.unref();
    channel?.unref?.();
  }
}

/** Starts the launcher now if it is not running: at the service's start-up, while its own fork is cheap. */
export function startLauncher(): void {
  running();
}

function running(): Launcher {
  if (launcher?.process.connected) return launcher;
  // A session of its own (detached: setsid), and with it a scheduling group the launcher makes as nice as its
  // children (launcher-child.mjs): heavy work never takes a core from the service or its database.
  const process = fork(launcherFile, [String(LAUNCHER_NICE)], {
    execArgv: [],
    detached: true,
    serialization: "advanced",
    stdio: ["ignore", "ignore", "inherit", "ipc"],
  });
  const owner: Launcher = { process, children: new Map(), referenced: new Set() };
  launcher = owner;
  holdOpen(owner);
  process.on("message", (report: Report) => {
    if (report.op === "ready") return;
    const child = owner.children.get(report.id);
    if (!child) return;
    if (report.op === "spawned") {
      child.pid = report.pid;
      child.emit("spawn", report.pid);
    } else if (report.op === "message") child.emit("message", report.message);
    else child.ended(report.code, report.signal, report.error);
  });
  const gone = () => {
    if (launcher === owner) launcher = undefined;
    for (const child of [...owner.children.values()]) child.ended(null, "SIGKILL");
  };
  process.once("exit", gone);
  process.once("error", () => {
    process.kill("SIGKILL");
    gone();
  });
  return owner;
}

/** Starts `module` (a file Node runs as it is, or with the loader in `execArgv`) as a child over IPC. */
export function launch(module: URL, options: LaunchOptions = {}): LaunchedProcess {
  const owner = running();
  const child = new LaunchedProcess(owner, nextId++);
  owner.children.set(child.id, child);
  child.ref();
  request(owner, {
    op: "spawn",
    id: child.id,
    module: module.href,
    execArgv: options.execArgv ?? [],
    stderr: options.stderr ?? "ignore",
  });
  return child;
}

/** The launcher's process id, if it runs (for operators and tests). */
export function launcherPid(): number | undefined {
  return launcher?.process.connected ? launcher.process.pid : undefined;
}
