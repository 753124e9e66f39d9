/**
 * The main thread's end of the embedded database's worker (pglite-worker.ts): the worker, and a socket-like
 * Duplex per `pg` connection that carries wire-protocol bytes to it and back. `pg` sees a PostgreSQL server.
 */
import { readFile } from "node:fs/promises";
import { Duplex } from "node:stream";
import { Worker } from "node:worker_threads";
import type { FromWorker, PgliteWorkerData, ToWorker } from "./pglite-worker.js";

const TERMINATE = 0x58; // 'X': a PGlite backend must never see it (it would end the only session)

export interface PgliteThread {
  /** A new connection's socket, for pg's `stream` option. */
  stream(): Duplex;
  close(): Promise<void>;
}

// The worker runs the same kind of file as this one: built .js, or .ts from source (tests, `npm run dev`),
// where Node 20 does not carry tsx's loader into worker threads: the worker registers it first.
const fromSource = import.meta.url.endsWith(".ts");
const workerUrl = new URL(`./pglite-worker${fromSource ? ".ts" : ".js"}`, import.meta.url);
const workerFile = fromSource
  ? `import(${JSON.stringify(import.meta.resolve("tsx/esm/api"))}).then((tsx) => { tsx.register(); return import(${JSON.stringify(workerUrl.href)}); });`
  : workerUrl;

// PGlite in-process compiles its WebAssembly once per process; a fresh worker would compile it again for every
// database (tests open dozens). Compiled here once, the modules are handed to every worker.
let compiled: Promise<{ pgliteWasmModule: WebAssembly.Module; initdbWasmModule: WebAssembly.Module }> | undefined;
function compiledModules() {
  compiled ??= (async () => {
    const dist = new URL(".", import.meta.resolve("@electric-sql/pglite"));
    const [pgliteWasmModule, initdbWasmModule] = await Promise.all(
      ["pglite.wasm", "initdb.wasm"].map(async (name) => WebAssembly.compile(await readFile(new URL(name, dist)))),
    );
    return { pgliteWasmModule: pgliteWasmModule!, initdbWasmModule: initdbWasmModule! };
  })();
  compiled.catch(() => (compiled = undefined));
  return compiled;
}

export async function startPgliteThread(
  dataDir: string,
  settings: Record<string, string>,
  loadDataDir?: Uint8Array<ArrayBuffer>,
): Promise<PgliteThread> {
  const modules = await compiledModules();
  const worker = new Worker(workerFile, {
    eval: fromSource,
    workerData: { dataDir, settings, ...modules, ...(loadDataDir ? { loadDataDir } : {}) } satisfies PgliteWorkerData,
    // The thread's own JavaScript is small (its memory is PGlite's WebAssembly heap, outside V8's): a young
    // generation of 6 MB instead of V8's 16–32 MB holds the same work (docs/performance.md, peak RSS).
    resourceLimits: { maxYoungGenerationSizeMb: 6 },
  });
  const sockets = new Map<number, WorkerSocket>();
  let nextConn = 1;
  let inFlight = 0;
  let dead: Error | null = null;
  let onClosed: (() => void) | null = null;

  // The worker keeps the process alive only while it owes an answer: like an in-process PGlite, an idle
  // database never holds the process open.
  const sent = () => {
    if (inFlight++ === 0) worker.ref();
  };
  const answered = () => {
    if (--inFlight === 0) worker.unref();
  };

  const ready = new Promise<void>((resolve, reject) => {
    worker.on("message", (message: FromWorker) => {
      switch (message.kind) {
        case "ready":
          worker.unref();
          resolve();
          break;
        case "failed":
          reject(new Error(message.message));
          break;
        case "closed":
          onClosed?.();
          break;
        case "data":
          answered();
          sockets
            .get(message.conn)
            ?.receive(Buffer.from(message.bytes.buffer, message.bytes.byteOffset, message.bytes.byteLength));
          break;
        case "broken":
          answered();
          sockets.get(message.conn)?.destroy(new Error(`embedded database: ${message.message}`));
          break;
      }
    });
    const fail = (error: Error) => {
      dead ??= error;
      reject(error);
      for (const socket of sockets.values()) socket.destroy(error);
      onClosed?.();
    };
    worker.on("error", (error) => fail(error));
    worker.on("exit", (code) => fail(new Error(`the embedded database's thread exited (code ${code})`)));
  });

  try {
    await ready;
  } catch (error) {
    await worker.terminate();
    throw error;
  }

  return {
    stream() {
      const conn = nextConn++;
      const socket = new WorkerSocket(
        (bytes) => {
          if (dead) throw dead;
          sent();
          worker.postMessage({ kind: "data", conn, bytes } satisfies ToWorker, [bytes.buffer as ArrayBuffer]);
        },
        () => sockets.delete(conn),
      );
      sockets.set(conn, socket);
      return socket;
    },
    async close() {
      if (dead) return;
      worker.ref();
      await new Promise<void>((resolve) => {
        onClosed = resolve;
        worker.postMessage({ kind: "close" } satisfies ToWorker);
      });
      dead = new Error("the embedded database is closed");
      await worker.terminate();
    },
  };
}

/**
 * What pg's Connection needs of a net.Socket. Writes made in one tick (pg writes Parse, Bind, Describe,
 * Execute and Sync separately) travel as one message; Terminate is dropped.
 */
class WorkerSocket extends Duplex {
  private pending: Buffer[] = [];
  private scheduled = false;
  private started = false;

  constructor(
    private readonly send: (bytes: Uint8Array) => void,
    private readonly forget: () => void,
  ) {
    super();
  }

  connect(): this {
    process.nextTick(() => this.emit("connect"));
    return this;
  }
  setNoDelay(): this {
    return this;
  }
  setKeepAlive(): this {
    return this;
  }
  ref(): this {
    return this;
  }
  unref(): this {
    return this;
  }

  receive(bytes: Buffer): void {
    if (bytes.length > 0) this.push(bytes);
  }

  override _read(): void {}

  override _write(chunk: Buffer, _encoding: BufferEncoding, callback: (error?: Error | null) => void): void {
    this.pending.push(chunk);
    if (!this.scheduled) {
      this.scheduled = true;
      process.nextTick(() => this.flush());
    }
    callback();
  }

  private flush(): void {
    this.scheduled = false;
    if (this.destroyed || this.pending.length === 0) return;
    const chunks = this.pending;
    this.pending = [];
    try {
      if (!this.started) {
        // The startup packet (pg's first write, alone: it waits for the answer) has no type byte.
        this.started = true;
        this.send(new Uint8Array(chunks.shift()!));
      }
      const bytes = frontendMessages(chunks);
      if (bytes.length > 0) this.send(bytes);
    } catch (error) {
      this.destroy(error as Error);
    }
  }

  override _final(callback: (error?: Error | null) => void): void {
    this.push(null);
    callback();
  }

  override _destroy(error: Error | null, callback: (error?: Error | null) => void): void {
    this.forget();
    callback(error);
  }
}

/**
 * The frontend messages of `chunks` (each holds whole messages: type byte, int32 length, body) in one fresh
 * buffer, transferable to the worker without touching pg's (pooled) buffers, less any Terminate.
 */
function frontendMessages(chunks: Buffer[]): Uint8Array {
  let total = 0;
  for (const chunk of chunks) total += chunk.length;
  const out = new Uint8Array(total);
  let size = 0;
  for (const chunk of chunks) {
    let offset = 0;
    while (offset < chunk.length) {
      const end = offset + 1 + chunk.readInt32BE(offset + 1);
      if (chunk[offset] !== TERMINATE) {
        out.set(chunk.subarray(offset, end), size);
        size += end - offset;
      }
      offset = end;
    }
  }
  return size === total ? out : out.slice(0, size);
}
