// The checks an uploaded agreement passes before anything is stored (docs/api.md, "Uploading a contract"):
// not empty, at most 10 MB, a PDF, readable and not encrypted. Shared by the API's upload and the dashboard's.
import { createHash } from "node:crypto";
import { QueueFullError } from "../../platform/fair-queue.js";
import type { ChildBudget } from "../../platform/budgeted-child.js";
import { OCR_PAGE_BUDGET, OCR_PAGES, OCR_WAIT_MS, ocrPages } from "../../platform/pdf-ocr.js";
import {
  inspectionRefusal,
  inspectPdf,
  looksLikePdf,
  PDF_BUDGET,
  PDF_QUEUE,
  type PdfTextItem,
} from "../../platform/pdf-text.js";
import { RateLimitedError, TooLargeError, UnsupportedContentError, ValidationError } from "../kernel/errors.js";
import { MAX_AGREEMENT_BYTES, MAX_AGREEMENT_PAGES } from "./contract-schemas.js";
import type { ExtractionItem, ExtractionWarning } from "./extraction/extraction-types.js";

/** A file as it arrived: the name the client gave it and its bytes. */
export interface UploadedFile {
  filename: string | undefined;
  bytes: Buffer;
}

/**
 * When a company refused `too_many_uploads` may try again: a reading takes about a second, and one its budget
 * stops a few seconds (docs/performance.md, "Upload fairness").
 */
const UPLOAD_RETRY_SECONDS = 5;

/**
 * Refuses a file that cannot be a contract's agreement, each reason with its own code; otherwise the text of
 * its first `textPages` pages. The file is read in its company's turn: each company's uploads are queued apart
 * and served in turn (platform/pdf-text.ts), a company with two uploads running or waiting is refused a third
 * (429 `too_many_uploads`), as is any upload while the queue over all companies is full.
 */
export async function checkAgreementFile(
  companyId: string,
  file: UploadedFile,
  budgets: ReadingBudgets = DEFAULT_READING_BUDGETS,
  textPages = 0,
): Promise<PdfTextItem[]> {
  return (await inspectAgreementFile(companyId, file, budgets, textPages)).items;
}

/**
 * What reading an uploaded agreement may take: a PDF's reading (CPU time, wall-clock backstop, memory), one OCR
 * page's, and how long a scan waits for an OCR turn. The composition passes them (compose.ts, from config.ts);
 * these defaults are the platform readers' own.
 */
export interface ReadingBudgets {
  pdf: ChildBudget;
  ocrPage: ChildBudget;
  ocrWaitMs: number;
}

export const DEFAULT_READING_BUDGETS: ReadingBudgets = {
  pdf: PDF_BUDGET,
  ocrPage: OCR_PAGE_BUDGET,
  ocrWaitMs: OCR_WAIT_MS,
};

/** checkAgreementFile's checks, and what the reading found: the page count and the pages without text. */
async function inspectAgreementFile(
  companyId: string,
  file: UploadedFile,
  budgets: ReadingBudgets,
  textPages: number,
): Promise<{ pageCount: number; items: PdfTextItem[]; textless: number[] }> {
  if (file.bytes.length === 0)
    throw new ValidationError("The file is empty: attach the signed agreement as a PDF", "file_empty");
  if (file.bytes.length > MAX_AGREEMENT_BYTES) {
    throw new TooLargeError(
      "The file is larger than 10 MiB (10,485,760 bytes); upload a smaller PDF of the agreement",
      "file_too_large",
    );
  }
  if (!looksLikePdf(file.bytes))
    throw new UnsupportedContentError("The file is not a PDF; upload the signed agreement as a PDF", "file_not_pdf");
  const inspection = await inspectPdf(file.bytes, { queueKey: companyId, textPages, budget: budgets.pdf }).catch(
    (error: unknown) => {
      if (!(error instanceof QueueFullError)) throw error;
      throw tooManyUploads(error.bound);
    },
  );
  if (inspection.kind === "encrypted") {
    throw new ValidationError(
      "The PDF is encrypted or password-protected; upload a copy saved without a password",
      "file_encrypted",
    );
  }
  if (inspection.kind === "unreadable")
    throw new ValidationError("The file starts like a PDF but cannot be read; it may be damaged", "file_unreadable");
  if (inspection.kind === "too_complex") {
    throw new ValidationError(
      "The PDF unpacks into more than the service reads for one file, or takes too long to read; save it again as a plain PDF",
      "file_too_complex",
    );
  }
  if (inspection.pageCount > MAX_AGREEMENT_PAGES) {
    throw new ValidationError(
      `The PDF has ${inspection.pageCount} pages; an agreement may have at most ${MAX_AGREEMENT_PAGES}`,
      "file_too_many_pages",
      [{ path: "file", message: `at most ${MAX_AGREEMENT_PAGES} pages` }],
    );
  }
  return inspection;
}

/** Pages an extraction reads the text of: an agreement's schedules may stand at its end. */
const EXTRACT_PAGES = 30;

/** OCR runs without a word in them that the engine is less sure of than this are specks and smudges. */
const MIN_OCR_CONFIDENCE = 0.15;

/**
 * An agreement's text for extraction: the file is checked as an upload is (checkAgreementFile), then the runs of
 * text of its first EXTRACT_PAGES pages are returned; its pages without text (a scan) are read by OCR, the first
 * OCR_PAGES of them, in the company's turn (platform/pdf-ocr.ts). The warnings say what was read how, and what
 * could not be read.
 */
export async function readAgreementForExtraction(
  companyId: string,
  file: UploadedFile,
  budgets: ReadingBudgets = DEFAULT_READING_BUDGETS,
): Promise<{ items: ExtractionItem[]; warnings: ExtractionWarning[] }> {
  const read = await inspectAgreementFile(companyId, file, budgets, EXTRACT_PAGES);
  const warnings: ExtractionWarning[] = [];
  const items: ExtractionItem[] = [...read.items];
  if (read.pageCount > EXTRACT_PAGES) {
    warnings.push({
      code: "pages_skipped",
      message: `The document has ${read.pageCount} pages: the first ${EXTRACT_PAGES} were read, the rest were not.`,
    });
  }
  if (read.textless.length === 0) return { items, warnings };
  const wanted = read.textless.slice(0, OCR_PAGES);
  const skipped = read.textless.slice(OCR_PAGES);
  const ocr = await ocrPages(file.bytes, wanted, {
    queueKey: companyId,
    waitMs: budgets.ocrWaitMs,
    pageBudget: budgets.ocrPage,
  });
  // Tesseract gives some clearly read words a confidence of 0: a word of letters or digits is kept whatever
  // its confidence (it shows in the value's own), only a doubtful speck is dropped.
  const words = ocr.items.filter(
    (item) => item.confidence >= MIN_OCR_CONFIDENCE || /\p{L}{3,}|\d{2,}/u.test(item.text),
  );
  items.push(...words);
  const unread = ocr.unread?.pages ?? [];
  const readPages = wanted.filter((page) => !ocr.failedPages.includes(page) && !unread.includes(page));
  const empty = readPages.filter((page) => !words.some((item) => item.page === page));
  const scanned = readPages.filter((page) => !empty.includes(page));
  if (scanned.length > 0) {
    warnings.push({
      code: "ocr",
      message: `${pagesWords(scanned)} ${scanned.length === 1 ? "has" : "have"} no text layer and ${scanned.length === 1 ? "was" : "were"} read by OCR: check every value against the document.`,
      pages: scanned,
    });
  }
  if (empty.length > 0) {
    warnings.push({
      code: "no_text",
      message: `${pagesWords(empty)} ${empty.length === 1 ? "has" : "have"} no text, and OCR found no words on ${empty.length === 1 ? "it" : "them"}.`,
      pages: empty,
    });
  }
  if (ocr.failedPages.length > 0) {
    warnings.push({
      code: "ocr_failed",
      message: `${pagesWords(ocr.failedPages)} could not be read by OCR within the time and memory one page may take.`,
      pages: ocr.failedPages,
    });
  }
  if (ocr.unread) {
    const { pages, bound, retryAfterSeconds } = ocr.unread;
    const why =
      bound === "key"
        ? "your company already has other scans being read by OCR"
        : "the service is reading as many other scans as it can hold";
    warnings.push({
      code: "ocr_busy",
      message: `${pagesWords(pages)} ${pages.length === 1 ? "has" : "have"} no text and must be read by OCR, but ${why}: ${pages.length === 1 ? "it was" : "they were"} not read. Send the file again in ${retryAfterSeconds} seconds.`,
      pages,
    });
  }
  if (skipped.length > 0) {
    warnings.push({
      code: "ocr_skipped",
      message: `${pagesWords(skipped)} ${skipped.length === 1 ? "has" : "have"} no text either; OCR reads the first ${OCR_PAGES} such pages of a file only.`,
      pages: skipped,
    });
  }
  return { items, warnings };
}

/** "Page 2", "Pages 1–3", "Pages 1, 3 and 5". */
function pagesWords(pages: readonly number[]): string {
  if (pages.length === 1) return `Page ${pages[0]}`;
  const runs: string[] = [];
  for (let k = 0; k < pages.length; ) {
    let end = k;
    while (end + 1 < pages.length && pages[end + 1] === pages[end]! + 1) end++;
    runs.push(end > k + 1 ? `${pages[k]}–${pages[end]}` : end === k + 1 ? `${pages[k]}, ${pages[end]}` : `${pages[k]}`);
    k = end + 1;
  }
  const list = runs.join(", ");
  const last = list.lastIndexOf(", ");
  return `Pages ${last < 0 ? list : `${list.slice(0, last)} and ${list.slice(last + 2)}`}`;
}

function tooManyUploads(bound: QueueFullError["bound"]): RateLimitedError {
  return RateLimitedError.tooManyUploads(
    UPLOAD_RETRY_SECONDS,
    bound === "key"
      ? `Your company already has ${PDF_QUEUE.perKey} uploaded files being checked`
      : "The service is checking as many uploaded files as it can hold",
  );
}

/**
 * Refuses an upload that its company's turn could not take now, before its body is read: a company that fires
 * many files at once is answered at once, and the service does not read megabytes it would refuse. (The file is
 * still queued or refused when it is read: another upload may take the room meanwhile.)
 */
export function requireUploadRoom(companyId: string): void {
  const bound = inspectionRefusal(companyId);
  if (bound) throw tooManyUploads(bound);
}

/** The name a download is offered under: the client's, without a path or characters a header cannot carry. */
export function storedFilename(filename: string | undefined): string {
  const base = (filename ?? "").split(/[\\/]/).pop() ?? "";
  // Printable characters only; surrogates go too (an unpaired one cannot be stored; emoji are not missed).
  const clean = base
    .replace(/[^\x20-\x7e\u00a0-\ud7ff\ue000-\ufffd]|["\\]/g, "")
    .trim()
    .slice(0, 200);
  return clean === "" ? "agreement.pdf" : clean;
}

export const sha256Hex = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");
