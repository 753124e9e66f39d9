// Reading a PDF someone uploaded: whether it opens, whether it is encrypted, and the words on its first
// pages with where they stand. pdfjs-dist (Mozilla's PDF.js) does the parsing, with eval off, in a child
// process of its own (pdf-text-child.mjs) with a memory and a CPU-time budget (budgeted-child.ts): a small file
// can be built to unpack into gigabytes or to parse for minutes, and such a file must cost the service one
// refused upload, not the process. At most PDF_CHILDREN files are read at once, so that the budget bounds what uploads take together
// (PDF_CHILDREN times the memory budget); the rest wait in a fair queue (fair-queue.ts) under a key the caller
// gives, each key in turn, one file at a time per key: one key's files, however many, delay another key's by
// at most one reading, never by all of theirs.
import { type ChildBudget, runBudgetedChild } from "./budgeted-child.js";
import { createFairQueue, type FairQueueLimits } from "./fair-queue.js";

/** A run of text on a page, placed by its baseline's start in PDF points (origin bottom left). */
export interface PdfTextItem {
  page: number;
  x: number;
  y: number;
  text: string;
  /** The run's width and font size in points. */
  width?: number;
  height?: number;
}

export type PdfInspection =
  /** `textless`: the pages read for their text that have none (a scan, or a blank page). */
  | { kind: "readable"; pageCount: number; items: PdfTextItem[]; textless: number[] }
  | { kind: "encrypted" }
  | { kind: "unreadable"; reason: string }
  /** Over the memory or time budget: a file that unpacks into too much, or takes too long to parse. */
  | { kind: "too_complex" };

/** The first bytes of every PDF (ISO 32000-1, 7.5.2); a file that does not start so is not one. */
export function looksLikePdf(bytes: Uint8Array): boolean {
  return bytes.length >= 5 && Buffer.from(bytes.subarray(0, 5)).toString("latin1") === "%PDF-";
}

/**
 * What one reading may take (budgeted-child.ts): 15 s of CPU, 60 s of wall clock whatever its CPU (the backstop
 * for a child stuck without using any), 512 MiB resident and a heap of 256 MiB. An ordinary agreement takes a
 * few tenths of a second of CPU; a busy machine makes that longer in wall time, never more CPU.
 */
export const PDF_BUDGET: ChildBudget = { cpuMs: 15_000, wallMs: 60_000, rssBytes: 512 * 1024 * 1024 };
const HEAP_MB = 256;

/**
 * A reading that has used this much CPU is no ordinary agreement (those take a few tenths of a second) and is
 * given the lowest CPU priority (nice 19) for the rest of its budget: two readings run at once on a machine
 * of two cores, and a file built to unpack for seconds must not halve the speed of another company's reading
 * beside it (docs/performance.md, "Upload fairness"). CPU time, not wall time: on a busy machine an ordinary
 * reading takes longer without being one that unpacks for seconds.
 */
const SLOW_READING_CPU_MS = 500;
const SLOW_READING_NICE = 19;
/**
 * Every reading starts below the service's own priority: on a machine of two cores, two readings at nice 0 took
 * both from the service's event loop and PostgreSQL for their first half second, and another company's requests
 * waited (docs/performance.md, "Stalls"). A reading on an idle machine is as fast at nice 10.
 */
const READING_NICE = 10;

// JavaScript beside this file, in the sources and in the build alike (tsconfig.build.json copies it).
const childFile = new URL("./pdf-text-child.mjs", import.meta.url);
const childArgs = [`--max-old-space-size=${HEAP_MB}`];

/**
 * The readings' queue: two children at once (one core each on a small machine; 1 GiB together at most), one
 * per key, so a key's second file waits while another key's first is read; a key may have two files running
 * or waiting, and 16 files wait at most over all keys (each holds its bytes, 10 MiB at most, while it waits).
 */
export const PDF_QUEUE: FairQueueLimits = { slots: 2, runningPerKey: 1, perKey: 2, waiting: 16 };

const queue = createFairQueue(PDF_QUEUE);

/**
 * Opens the PDF, reads the content of every page, and keeps the text of the first `textPages` pages (0: none,
 * only the checks). Every page is read because a page's content is where a small file unpacks into gigabytes:
 * a file is refused as too complex whichever page holds that, and whether or not its text is wanted. Encrypted
 * means any encryption, an owner password included: such a file cannot be shown to everyone who may read the
 * contract, nor its text trusted to be the one printed. Readings are queued under `queueKey` (see PDF_QUEUE);
 * one past its bounds is refused at once with a QueueFullError (fair-queue.ts).
 */
/** Whether a reading under `queueKey` would be refused now (QueueFullError's bound), before its bytes are read. */
export const inspectionRefusal = (queueKey: string) => queue.refusal(queueKey);

export function inspectPdf(
  bytes: Uint8Array,
  options: { queueKey: string; textPages?: number; budget?: ChildBudget },
): Promise<PdfInspection> {
  const { queueKey } = options;
  return queue.run(queueKey, async () => {
    const suspect = (slowKeys.get(queueKey) ?? 0) > Date.now() - SLOW_KEY_MS;
    const inspection = await inspectInChild(bytes, options.textPages ?? 0, options.budget ?? PDF_BUDGET, suspect, () =>
      slowKeys.set(queueKey, Date.now()),
    );
    if (slowKeys.size > 10_000) slowKeys.clear();
    return inspection;
  });
}

/**
 * Keys whose reading ran slow (SLOW_READING_CPU_MS) lately: their next readings for a minute start at the lowest
 * CPU priority at once, so that a key sending file after file built to unpack for seconds never takes a core
 * from another key's reading, even for the first second of each.
 */
const slowKeys = new Map<string, number>();
const SLOW_KEY_MS = 60_000;

async function inspectInChild(
  bytes: Uint8Array,
  textPages: number,
  budget: ChildBudget,
  demoteAtOnce: boolean,
  onSlow: () => void,
): Promise<PdfInspection> {
  let answer: PdfInspection | undefined;
  let slow = false;
  const child = runBudgetedChild(childFile, {
    budget,
    execArgv: childArgs,
    nice: demoteAtOnce ? SLOW_READING_NICE : READING_NICE,
    onMessage: (message) => {
      answer ??= message as PdfInspection;
    },
    onCheck: (cpuMs) => {
      if (slow || cpuMs <= SLOW_READING_CPU_MS) return;
      slow = true;
      onSlow();
      if (!demoteAtOnce) child.renice(SLOW_READING_NICE);
    },
  });
  child.send({ bytes, textPages });
  // Killed by its budget, out of heap, or gone without answering: the file is what took it down.
  await child.ended;
  return answer ?? { kind: "too_complex" };
}
