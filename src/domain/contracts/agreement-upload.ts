// The checks an uploaded agreement passes before anything is stored (docs/api.md, "Uploading a contract"):
// not empty, at most 10 MB, a PDF, readable and not encrypted. Shared by the API's upload and the dashboard's.
import { createHash } from "node:crypto";
import { inspectPdf, looksLikePdf, type PdfTextItem } from "../../platform/pdf-text.js";
import { TooLargeError, UnsupportedContentError, ValidationError } from "../kernel/errors.js";
import { MAX_AGREEMENT_BYTES } from "./contract-schemas.js";

/** A file as it arrived: the name the client gave it and its bytes. */
export interface UploadedFile {
  filename: string | undefined;
  bytes: Buffer;
}

/** Pages whose text the review form is filled in from: an agreement's terms are on its first pages. */
export const READ_PAGES = 10;

/**
 * Refuses a file that cannot be a contract's agreement, each reason with its own code; otherwise the text of
 * its first `textPages` pages.
 */
export async function checkAgreementFile(file: UploadedFile, textPages = 0): Promise<PdfTextItem[]> {
  if (file.bytes.length === 0) throw new ValidationError("The file is empty: attach the signed agreement as a PDF", "file_empty");
  if (file.bytes.length > MAX_AGREEMENT_BYTES) {
    throw new TooLargeError("The file is larger than 10 MiB (10,485,760 bytes); upload a smaller PDF of the agreement", "file_too_large");
  }
  if (!looksLikePdf(file.bytes)) throw new UnsupportedContentError("The file is not a PDF; upload the signed agreement as a PDF", "file_not_pdf");
  const inspection = await inspectPdf(file.bytes, { textPages });
  if (inspection.kind === "encrypted") {
    throw new ValidationError("The PDF is encrypted or password-protected; upload a copy saved without a password", "file_encrypted");
  }
  if (inspection.kind === "unreadable") throw new ValidationError("The file starts like a PDF but cannot be read; it may be damaged", "file_unreadable");
  if (inspection.kind === "too_complex") {
    throw new ValidationError("The PDF unpacks into more than the service reads for one file, or takes too long to read; save it again as a plain PDF", "file_too_complex");
  }
  return inspection.items;
}

/** The name a download is offered under: the client's, without a path or characters a header cannot carry. */
export function storedFilename(filename: string | undefined): string {
  const base = (filename ?? "").split(/[\\/]/).pop() ?? "";
  // Printable characters only; surrogates go too (an unpaired one cannot be stored; emoji are not missed).
  const clean = base.replace(/[^\x20-\x7e\u00a0-\ud7ff\ue000-\ufffd]|["\\]/g, "").trim().slice(0, 200);
  return clean === "" ? "agreement.pdf" : clean;
}

export const sha256Hex = (bytes: Buffer): string => createHash("sha256").update(bytes).digest("hex");

