// The checks an uploaded agreement passes before anything is stored (docs/api.md, "Uploading a contract"):
// not empty, at most 10 MB, a PDF, readable and not encrypted. Shared by the API's upload and the dashboard's.
import { createHash } from "node:crypto";
import { QueueFullError } from "../../platform/fair-queue.js";
import { inspectionRefusal, inspectPdf, looksLikePdf, PDF_QUEUE, type PdfTextItem } from "../../platform/pdf-text.js";
import { RateLimitedError, TooLargeError, UnsupportedContentError, ValidationError } from "../kernel/errors.js";
import { MAX_AGREEMENT_BYTES } from "./contract-schemas.js";
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
export async function checkAgreementFile(companyId: string, file: UploadedFile, textPages = 0): Promise<PdfTextItem[]> {
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
  const inspection = await inspectPdf(file.bytes, { queueKey: companyId, textPages }).catch((error: unknown) => {
    if (!(error instanceof QueueFullError)) throw error;
    throw tooManyUploads(error.bound);
  });
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
  return inspection.items;
}

/** Pages an extraction reads the text of: an agreement's schedules may stand at its end. */
export const EXTRACT_PAGES = 30;

/**
 * An agreement's text for extraction: the file is checked as an upload is (checkAgreementFile), then the runs of
 * text of its first EXTRACT_PAGES pages are returned, with warnings about what could not be read.
 */
export async function readAgreementForExtraction(
  companyId: string,
  file: UploadedFile,
): Promise<{ items: ExtractionItem[]; warnings: ExtractionWarning[] }> {
  const items = await checkAgreementFile(companyId, file, EXTRACT_PAGES);
  return { items, warnings: [] };
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
