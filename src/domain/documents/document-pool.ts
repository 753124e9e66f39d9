// Where the service's documents are made (docs/architecture.md, "Documents off the main thread"): every invoice,
// credit-note and agreement PDF, and every logo normalised, in a pool of two long-lived child processes
// (document-child.ts) at nice 10, queued per company, each company in turn (platform/child-pool.ts). A company
// with DOCUMENT_QUEUE.perKey documents running or waiting is refused another at once (429 `too_many_documents`,
// with Retry-After), as is any document while DOCUMENT_QUEUE.waiting wait over all companies.
import { type ChildPool, createChildPool } from "../../platform/child-pool.js";
import { QueueFullError } from "../../platform/fair-queue.js";
import type { NormalisedLogo } from "../account/logo-normaliser.js";
import type { AgreementPdfInput } from "../contracts/agreement-text.js";
import type { ExtractionContext, TermsReading } from "../contracts/extraction/extract-terms.js";
import type { ExtractionItem } from "../contracts/extraction/extraction-types.js";
import type { CreditNotePdfInput } from "../invoices/documents/credit-note-pdf.js";
import type { InvoicePdfInput } from "../invoices/documents/invoice-words.js";
import { RateLimitedError } from "../kernel/errors.js";

/**
 * Two children: one company's documents take one at a time (runningPerKey), so another company's document
 * always finds the other free, and at nice 10 both together leave the service's main thread its core on a
 * machine of two. A company may have 4 documents running or waiting; 32 wait at most over all companies.
 */
const DOCUMENT_QUEUE = { runningPerKey: 1, perKey: 4, waiting: 32 } as const;
const DOCUMENT_CHILDREN = 2;
/**
 * What one document may take: an invoice of thousands of lines renders in well under a second of CPU; the
 * wall-clock backstop is generous, since a child at nice 10 on a busy machine gets the core last.
 */
const DOCUMENT_BUDGET = { cpuMs: 20_000, wallMs: 120_000, rssBytes: 768 * 1024 * 1024, heapMb: 384 } as const;
const DOCUMENT_NICE = 10;
/** When a company refused `too_many_documents` may try again: a document takes a fraction of a second. */
const DOCUMENT_RETRY_SECONDS = 2;

// The same kind of file as this one: built .js, or .ts from source (tests, `npm run dev`), started with tsx.
const fromSource = import.meta.url.endsWith(".ts");
const entry = new URL(`./document-child${fromSource ? ".ts" : ".js"}`, import.meta.url);

let pool: ChildPool | undefined;
/** The pool, started with the first document: a process that never makes one (the CLI) starts no child. */
function documentPool(): ChildPool {
  pool ??= createChildPool({
    entry,
    children: DOCUMENT_CHILDREN,
    queue: DOCUMENT_QUEUE,
    budget: DOCUMENT_BUDGET,
    nice: DOCUMENT_NICE,
  });
  return pool;
}

/**
 * The pool as operators and tests see it: documents running and waiting now over every company, the document
 * processes' ids, and a company's turn held (ChildPool's `hold`) to prove the queue's order without timing.
 */
export const documentTurns = {
  load: () => documentPool().load(),
  pids: () => documentPool().pids(),
  hold: (companyId: string) => documentPool().hold(companyId),
};

async function inTurn<T>(companyId: string, kind: string, input: unknown): Promise<T> {
  try {
    return await documentPool().run<T>(companyId, kind, input);
  } catch (error) {
    if (error instanceof QueueFullError) throw tooManyDocuments(error.bound);
    throw error;
  }
}

function tooManyDocuments(bound: QueueFullError["bound"]): RateLimitedError {
  return RateLimitedError.tooManyDocuments(
    DOCUMENT_RETRY_SECONDS,
    bound === "key"
      ? `Your company already has ${DOCUMENT_QUEUE.perKey} documents being made`
      : "The service is making as many documents as it can hold",
  );
}

/** The structured clone gives a Uint8Array: the surfaces send a Buffer. */
const asBuffer = (bytes: Uint8Array): Buffer => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length);

/** An invoice's PDF (invoices/documents/invoice-pdf.ts), made in its company's turn. */
export async function invoicePdf(companyId: string, input: InvoicePdfInput): Promise<Buffer> {
  return asBuffer(await inTurn<Uint8Array>(companyId, "invoicePdf", input));
}

/** A credit note's PDF (invoices/documents/credit-note-pdf.ts), made in its company's turn. */
export async function creditNotePdf(companyId: string, input: CreditNotePdfInput): Promise<Buffer> {
  return asBuffer(await inTurn<Uint8Array>(companyId, "creditNotePdf", input));
}

/** A generated agreement's PDF (contracts/agreement-pdf.ts), made in its company's turn. */
export async function agreementPdf(companyId: string, input: AgreementPdfInput): Promise<Buffer> {
  return asBuffer(await inTurn<Uint8Array>(companyId, "agreementPdf", input));
}

/**
 * The terms an agreement's text proposes (contracts/extraction/extract-terms.ts), read in its company's turn: the
 * reading's cost grows with the runs of text on its pages (a crafted page of thousands of runs takes a second).
 */
export function extractedTerms(
  companyId: string,
  items: readonly ExtractionItem[],
  context: ExtractionContext,
): Promise<TermsReading> {
  return inTurn<TermsReading>(companyId, "extractTerms", { items, context });
}

/** A logo checked whole and scaled to what documents print (account/logo-normaliser.ts), in its company's turn. */
export function normalisedLogo(companyId: string, bytes: Uint8Array): Promise<NormalisedLogo> {
  return inTurn<NormalisedLogo>(companyId, "logo", bytes);
}
