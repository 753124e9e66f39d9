/**
 * The embedded database's thread. PGlite executes SQL as WebAssembly on the thread that calls it; run on the
 * service's own event loop, one long statement stalls every request. Here it runs on a worker thread and
 * speaks the PostgreSQL wire protocol: the main thread's `pg` client writes frontend messages, this thread
 * feeds them to PGlite's backend (`execProtocolRawStream`) and sends the backend's bytes back untouched. So `pg`
 * parses rows, types and errors on the main thread exactly as it does for a PostgreSQL server.
 *
 * Messages in:  { kind: "data", conn, bytes }   frontend bytes of connection `conn` (whole messages)
 *               { kind: "close" }               close PGlite (after everything queued), then say "closed"
 * Messages out: { kind: "ready" } | { kind: "failed", message } | { kind: "closed" }
 *               { kind: "data", conn, bytes }   the backend's answer to one "data" message
 *               { kind: "broken", conn, message } PGlite threw (not an SQL error: those travel as bytes)
 */
import { parentPort, workerData } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";

export interface PgliteWorkerData {
  dataDir: string;
  /** Extra `-c name=value` settings for the backend (memory). */
  settings: Record<string, string>;
  pgliteWasmModule?: WebAssembly.Module;
  initdbWasmModule?: WebAssembly.Module;
  /** A data folder's tarball to start from (open-database.ts, StorageConfig's loadDataDir). */
  loadDataDir?: Uint8Array<ArrayBuffer>;
}

export type ToWorker = { kind: "data"; conn: number; bytes: Uint8Array } | { kind: "close" };
export type FromWorker =
  | { kind: "ready" }
  | { kind: "failed"; message: string }
  | { kind: "closed" }
  | { kind: "data"; conn: number; bytes: Uint8Array }
  | { kind: "broken"; conn: number; message: string };

const port = parentPort!;
const data = workerData as PgliteWorkerData;
const STARTUP_FIRST_BYTE = 0; // a startup packet begins with its length, whose high byte is 0

async function main(): Promise<void> {
  let pglite: PGlite;
  try {
    const defaults = (PGlite as unknown as { defaultStartParams: string[] }).defaultStartParams;
    const settings = Object.entries(data.settings).flatMap(([name, value]) => ["-c", `${name}=${value}`]);
    pglite = await PGlite.create(data.dataDir, {
      startParams: [...defaults, ...settings],
      ...(data.pgliteWasmModule ? { pgliteWasmModule: data.pgliteWasmModule } : {}),
      ...(data.initdbWasmModule ? { initdbWasmModule: data.initdbWasmModule } : {}),
      ...(data.loadDataDir ? { loadDataDir: new Blob([data.loadDataDir]) } : {}),
    });
  } catch (error) {
    port.postMessage({
      kind: "failed",
      message: error instanceof Error ? error.message : String(error),
    } satisfies FromWorker);
    return;
  }

  // One backend, one session: messages run strictly in arrival order.
  let queue: Promise<void> = Promise.resolve();
  port.on("message", (message: ToWorker) => {
    queue = queue.then(async () => {
      if (message.kind === "close") {
        try {
          await pglite.close();
        } finally {
          // Said even when closing failed: the main thread ends this thread either way.
          port.postMessage({ kind: "closed" } satisfies FromWorker);
          port.close();
        }
        return;
      }
      try {
        if (message.bytes[0] === STARTUP_FIRST_BYTE && pglite.isInTransaction()) {
          // A new connection never inherits the transaction of one the pool gave up on.
          await pglite.exec("ROLLBACK");
        }
        // The raw stream, not execProtocolRaw: that one also parses every answer into messages it keeps.
        // Each chunk is a view on PGlite's memory, valid only during the callback: copied.
        const chunks: Uint8Array[] = [];
        let size = 0;
        await pglite.execProtocolRawStream(message.bytes, {
          onRawData: (chunk: Uint8Array) => {
            chunks.push(chunk.slice());
            size += chunk.length;
          },
        });
        const bytes = chunks.length === 1 ? chunks[0]! : new Uint8Array(size);
        if (chunks.length > 1) {
          let offset = 0;
          for (const chunk of chunks) {
            bytes.set(chunk, offset);
            offset += chunk.length;
          }
        }
        port.postMessage({ kind: "data", conn: message.conn, bytes } satisfies FromWorker, [
          bytes.buffer as ArrayBuffer,
        ]);
      } catch (error) {
        const text = error instanceof Error ? error.message : String(error);
        port.postMessage({ kind: "broken", conn: message.conn, message: text } satisfies FromWorker);
      }
    });
  });
  port.postMessage({ kind: "ready" } satisfies FromWorker);
}

void main();
