// Reading the pages of an uploaded PDF that have no text (a scan) by OCR, in a child process of its own
// (pdf-ocr-child.mjs) with a memory and a time budget, like the text reading (pdf-text.ts). OCR takes a core for
// a second or more per page, so the whole service runs one reading at a time: the rest wait in a fair queue
// (one company's files never hold another's back by more than one reading), at lowest CPU priority so that
// ingestion and every other request keep their speed, and a file that has waited OCR_WAIT_MS without its turn
// gives up (`busy`): its text pages are still read, and the answer says the scanned ones were not.
import { type ChildProcess, fork } from "node:child_process";
import { setPriority } from "node:os";
import { createFairQueue, type FairQueueLimits, QueueFullError } from "./fair-queue.js";
import { type PdfTextItem, residentBytes } from "./pdf-text.js";

/** A word read by OCR: where it stands in PDF points, and the engine's confidence in it (0–1). */
export interface OcrItem extends PdfTextItem {
  confidence: number;
}

export type OcrReading = { kind: "read"; items: OcrItem[]; failedPages: number[] } | { kind: "busy" };

/** Pages of one file read by OCR at most; an agreement's terms are on its first pages. */
export const OCR_PAGES = 5;
/** How long a file waits for its turn before it gives up. */
const OCR_WAIT_MS = 30_000;
/** What one page may take: a 300 dpi page reads in two to four seconds on a quiet core, several times that on a busy machine (OCR runs at the lowest priority). */
const PAGE_BUDGET_MS = 40_000;
/** The child's resident set: the engine's WebAssembly memory, the model and one page's bitmap. */
const RSS_BUDGET = 1024 * 1024 * 1024;
const OCR_NICE = 19;

/** One reading at a time for the whole service; a company may have two files waiting, eight wait in all. */
const OCR_QUEUE: FairQueueLimits = { slots: 1, runningPerKey: 1, perKey: 2, waiting: 8 };
const queue = createFairQueue(OCR_QUEUE);

/** Readings running and waiting now, over the service. */
export const ocrLoad = () => queue.load();

const childFile = new URL("./pdf-ocr-child.mjs", import.meta.url);

/**
 * The words on `pages` of the PDF, read by OCR in the company's turn (`queueKey`). A page the budget stops is
 * in `failedPages`; a file that cannot get a turn within OCR_WAIT_MS (or whose company already has files
 * waiting) is `busy`.
 */
export function ocrPages(
  bytes: Uint8Array,
  pages: readonly number[],
  options: { queueKey: string; waitMs?: number },
): Promise<OcrReading> {
  if (pages.length === 0) return Promise.resolve({ kind: "read", items: [], failedPages: [] });
  let expired = false;
  let timer: NodeJS.Timeout | undefined;
  const waited = new Promise<OcrReading>((resolve) => {
    timer = setTimeout(() => {
      expired = true;
      resolve({ kind: "busy" });
    }, options.waitMs ?? OCR_WAIT_MS);
    timer.unref();
  });
  const turn = queue
    .run(options.queueKey, async (): Promise<OcrReading> => {
      clearTimeout(timer);
      // Its turn came after it gave up: the slot goes to the next file at once.
      if (expired) return { kind: "busy" };
      return readInChild(bytes, pages.slice(0, OCR_PAGES));
    })
    .catch((error: unknown): OcrReading => {
      clearTimeout(timer);
      if (error instanceof QueueFullError) return { kind: "busy" };
      throw error;
    });
  return Promise.race([turn, waited]);
}

function readInChild(bytes: Uint8Array, pages: readonly number[]): Promise<OcrReading> {
  return new Promise((resolve, reject) => {
    const child: ChildProcess = fork(childFile, [], {
      execArgv: ["--max-old-space-size=512"],
      serialization: "advanced",
      stdio: ["ignore", "ignore", "ignore", "ipc"],
    });
    const items: OcrItem[] = [];
    const done = new Set<number>();
    const stop = () => child.kill("SIGKILL");
    // Each page has its own budget: the clock restarts when a page is done.
    let deadline = setTimeout(stop, PAGE_BUDGET_MS + 2_000); // and the engine's start, the first time
    const watch = setInterval(() => {
      if (child.pid !== undefined && residentBytes(child.pid) > RSS_BUDGET) stop();
    }, 100);
    try {
      if (child.pid !== undefined) setPriority(child.pid, OCR_NICE);
    } catch {
      // The OS may not allow it; the budget still holds.
    }
    child.on("message", (message: { kind: string; page?: number; items?: OcrItem[] }) => {
      if (message.kind !== "page" || message.page === undefined) return;
      done.add(message.page);
      items.push(...(message.items ?? []));
      clearTimeout(deadline);
      deadline = setTimeout(stop, PAGE_BUDGET_MS);
    });
    child.once("error", (error) => {
      clearTimeout(deadline);
      clearInterval(watch);
      reject(error);
    });
    child.once("exit", () => {
      clearTimeout(deadline);
      clearInterval(watch);
      resolve({ kind: "read", items, failedPages: pages.filter((page) => !done.has(page)) });
    });
    child.send({ bytes, pages: [...pages] });
  });
}
