import { Readable } from "node:stream";
import type { FastifyReply } from "fastify";

/**
 * Any route's reply: a route's typed reply types `send` by its JSON schemas, and these answers are bytes and
 * streams that no JSON schema describes (the OpenAPI document's file answers: openapi-files.ts).
 */
type AnyReply = FastifyReply<any, any, any, any, any, any, any, any>;

/** A PDF to send: its name, its bytes, and whether someone uploaded it (not one the service made). */
export interface PdfDocument {
  filename: string;
  pdf: Buffer;
  uploaded?: boolean;
}

// A stored PDF someone uploaded may carry JavaScript or launch actions, and a browser that shows it inline
// would run them on the service's origin: it is offered for download only, and were a browser to show it
// anyway, in a sandbox with nothing allowed (no script, no same origin, no requests).
const UPLOADED_PDF_CSP = "sandbox; default-src 'none'";

/**
 * How documents are sent, by the API and the dashboard alike: a PDF (an invoice, a contract's agreement), and
 * the usage statement streamed with the SHA-256 of its bytes (RFC 9530 Content-Digest). A PDF the service
 * made goes as `disposition` says; an uploaded one always as an attachment, sandboxed (above).
 */
export function sendPdf(reply: AnyReply, document: PdfDocument, disposition: "inline" | "attachment"): AnyReply {
  if (document.uploaded) {
    void reply.header("content-security-policy", UPLOADED_PDF_CSP).header("x-content-type-options", "nosniff");
  }
  const sentAs = document.uploaded ? "attachment" : disposition;
  return reply
    .type("application/pdf")
    .header("content-disposition", contentDisposition(sentAs, document.filename))
    .send(document.pdf);
}

/** A Content-Disposition: an ASCII name for old clients, and the exact one (RFC 6266) for the rest. */
function contentDisposition(disposition: "inline" | "attachment", filename: string): string {
  const ascii = filename.replace(/[^\x20-\x7e]|["\\]/g, "_");
  return ascii === filename
    ? `${disposition}; filename="${filename}"`
    : `${disposition}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(filename)}`;
}

export function sendUsageStatement(
  reply: AnyReply,
  statement: { filename: string; sha256: string; chunks: () => AsyncGenerator<string> },
): AnyReply {
  return reply
    .type("text/csv; charset=utf-8")
    .header("content-disposition", contentDisposition("attachment", statement.filename))
    .header("content-digest", `sha-256=:${statement.sha256}:`)
    .send(Readable.from(statement.chunks()));
}
