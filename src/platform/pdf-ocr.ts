// Reading the pages of an uploaded PDF that have no text (a scan) by OCR, in a child process of its own
// (pdf-ocr-child.mjs) under a CPU-time and memory budget per page (budgeted-child.ts), like the text reading
// (pdf-text.ts). OCR takes a core for a second or more per page, so the service runs two readings at once, one per
// key (company), at the lowest CPU priority so that ingestion and every other request keep their speed. The rest
// wait in a fair queue (fair-queue.ts), and turns are taken per page: between two pages a file passes its turn
// to another key's waiting file, so one key's scans, however many and however long, hold another key's back by
// one page at most. A file is given turns for OCR_WAIT_MS after it was queued; past that (or when its key has as many
// files as it may queue, or the queue is full) the pages it has not read are answered `unread`, with when to
// try again.
import { type BudgetedChild, type ChildBudget, runBudgetedChild } from "./budgeted-child.js";
import { createFairQueue, type FairQueueLimits, QueueFullError, type Turn } from "./fair-queue.js";
import type { PdfTextItem } from "./pdf-text.js";

/** A word read by OCR: where it stands in PDF points, and the engine's confidence in it (0–1). */
export interface OcrItem extends PdfTextItem {
  confidence: number;
}

export interface OcrReading {
  items: OcrItem[];
  /** Pages the budget stopped (and every page after the first of them). */
  failedPages: number[];
  /**
   * Pages not read because the file got no turn for them: its key already had as many files as it may queue
   * (`key`), the queue over all keys was full (`total`), or its wait ran out (`wait`). Absent when every page had
   * its turn.
   */
  unread?: { pages: number[]; bound: "key" | "total" | "wait"; retryAfterSeconds: number };
}

/** Pages of one file read by OCR at most; an agreement's terms are on its first pages. */
export const OCR_PAGES = 5;
/**
 * How long after it was queued a file is still given turns (the first page's and each later one's); a page being
 * read is never cut short, and a file no other key waits behind keeps its slot. The wait is fair (one page per
 * other company ahead in the round), so running out of it means the service is reading more companies' scans
 * than its two slots keep up with.
 */
export const OCR_WAIT_MS = 60_000;
/**
 * What one page may take: 30 s of CPU (a 300 dpi page reads in two to four seconds of one core; a busy machine
 * makes that longer in wall time only), 2 minutes of wall clock whatever its CPU (the backstop, for a child stuck
 * without using any), and 1 GiB resident (the engine's WebAssembly memory, the model and one page's bitmap).
 */
export const OCR_PAGE_BUDGET: ChildBudget = { cpuMs: 30_000, wallMs: 120_000, rssBytes: 1024 * 1024 * 1024 };
/** The first page of a child also starts the engine and loads the model (a few tenths of a second of CPU). */
const firstPageBudget = (page: ChildBudget): ChildBudget => ({ ...page, cpuMs: page.cpuMs + 5_000 });
const OCR_NICE = 19;
/** What a page takes on a quiet core, for telling a file that got no turn when to try again. */
const PAGE_SECONDS = 3;

/**
 * Two readings at once (a machine of two cores; OCR at nice 19 yields to everything else), one per company, so
 * that another company's scan is read beside the first company's rather than after it; a company may have two
 * files running or waiting, and eight wait in all (each holds its bytes, 10 MiB at most, and no process).
 * At most two OCR children are alive at once: 2 GiB of memory together at most.
 */
const OCR_QUEUE: FairQueueLimits = { slots: 2, runningPerKey: 1, perKey: 2, waiting: 8 };
const queue = createFairQueue(OCR_QUEUE);
/** Pages still to read, over the files running and waiting: what telling a file when to try again counts on. */
let pagesAhead = 0;

/** Readings running and waiting now, over the service. */
export const ocrLoad = () => queue.load();

const childFile = new URL("./pdf-ocr-child.mjs", import.meta.url);

/**
 * The words on `pages` of the PDF (the first OCR_PAGES of them), read by OCR in the company's turns (`queueKey`).
 * A page the budget stops is in `failedPages`, with the pages after it; pages that got no turn are `unread`.
 */
export async function ocrPages(
  bytes: Uint8Array,
  pages: readonly number[],
  options: { queueKey: string; waitMs?: number; pageBudget?: ChildBudget },
): Promise<OcrReading> {
  const wanted = pages.slice(0, OCR_PAGES);
  if (wanted.length === 0) return { items: [], failedPages: [] };
  const signal = AbortSignal.timeout(options.waitMs ?? OCR_WAIT_MS);
  const unread = (bound: "key" | "total" | "wait", rest: number[]): OcrReading["unread"] => ({
    pages: rest,
    bound,
    retryAfterSeconds: retryAfterSeconds(),
  });
  pagesAhead += wanted.length;
  const left = { pages: wanted.length };
  try {
    return await queue.run(options.queueKey, readInTurns, { signal });
  } catch (error) {
    if (error instanceof QueueFullError) return { items: [], failedPages: [], unread: unread(error.bound, wanted) };
    if (signal.aborted) return { items: [], failedPages: [], unread: unread("wait", wanted) };
    throw error;
  } finally {
    pagesAhead -= left.pages;
  }

  /** Reads the pages in the file's turns; a child is alive only while the file holds its slot. */
  async function readInTurns(turn: Turn): Promise<OcrReading> {
    const items: OcrItem[] = [];
    let reader: PageReader | undefined;
    try {
      for (const [index, page] of wanted.entries()) {
        if (index > 0 && turn.contended()) {
          // Another company's file waits: it reads a page, and this file's next page waits its turn. The child
          // ends meanwhile (a new one opens the file again), so that waiting files hold no process or memory.
          await reader?.end();
          reader = undefined;
          try {
            await turn.pass(signal);
          } catch (error) {
            if (!signal.aborted) throw error;
            return { items, failedPages: [], unread: unread("wait", wanted.slice(index)) };
          }
        }
        reader ??= openPageReader(bytes, options.pageBudget ?? OCR_PAGE_BUDGET);
        const words = await reader.read(page);
        left.pages--;
        pagesAhead--;
        // A page the budget stopped: the file is no agreement OCR can read, its other pages are not tried.
        if (words === undefined) return { items, failedPages: wanted.slice(index) };
        items.push(...words);
      }
      return { items, failedPages: [] };
    } finally {
      // Gone before the slot is given to another file: never more children alive than slots.
      await reader?.end();
    }
  }
}

/** When a file that got no turn may try again: the pages ahead of it, read two at a time; 10 s to 2 minutes. */
function retryAfterSeconds(): number {
  const seconds = Math.ceil((pagesAhead * PAGE_SECONDS) / OCR_QUEUE.slots / 10) * 10;
  return Math.min(120, Math.max(10, seconds));
}

interface PageReader {
  /** The page's words, or undefined when the budget stopped it (or the child failed). */
  read(page: number): Promise<OcrItem[] | undefined>;
  /** Ends the child; settles once it has exited. */
  end(): Promise<void>;
}

/** A child for one file, reading a page at a time, each under `pageBudget` (the first with the engine's start too). */
function openPageReader(bytes: Uint8Array, pageBudget: ChildBudget): PageReader {
  let answer: ((items: OcrItem[] | undefined) => void) | undefined;
  let first = true;
  const child: BudgetedChild = runBudgetedChild(childFile, {
    budget: firstPageBudget(pageBudget),
    execArgv: ["--max-old-space-size=512"],
    nice: OCR_NICE,
    onMessage: (message) => {
      const { kind, items } = message as { kind: string; items?: OcrItem[] };
      answer?.(kind === "page" ? (items ?? []) : undefined);
    },
  });
  // Gone (its budget, a crash): the page it was reading is lost.
  const gone = child.ended.then(
    () => undefined,
    () => undefined,
  );
  child.send({ kind: "open", bytes });
  return {
    read(page) {
      if (!first) child.restartBudget(pageBudget);
      first = false;
      const read = new Promise<OcrItem[] | undefined>((resolve) => {
        answer = resolve;
      });
      child.send({ kind: "page", page });
      return Promise.race([read, gone]);
    },
    end: () => {
      child.kill();
      return gone.then(() => undefined);
    },
  };
}
