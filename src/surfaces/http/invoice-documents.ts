import { Readable } from "node:stream";
import type { FastifyReply } from "fastify";

/**
 * How an invoice's documents are sent, by the API (invoice-routes.ts) and the dashboard alike: the PDF, and the
 * usage statement streamed with the SHA-256 of its bytes (RFC 9530 Content-Digest).
 */
export function sendInvoicePdf(reply: FastifyReply, document: { filename: string; pdf: Buffer }, disposition: "inline" | "attachment"): FastifyReply {
  return reply.type("application/pdf").header("content-disposition", `${disposition}; filename="${document.filename}"`).send(document.pdf);
}

export function sendUsageStatement(reply: FastifyReply, statement: { filename: string; sha256: string; chunks: () => AsyncGenerator<string> }): FastifyReply {
  return reply
    .type("text/csv; charset=utf-8")
    .header("content-disposition", `attachment; filename="${statement.filename}"`)
    .header("content-digest", `sha-256=:${statement.sha256}:`)
    .send(Readable.from(statement.chunks()));
}
