import type { Tenancy } from "../kernel/tenancy.js";
import type { CompanyScope } from "../../db/company-scope.js";
import { findCustomer, insertCustomer } from "../customers/customer-service.js";
import { requireScope } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import { ConflictError, NotFoundError } from "../kernel/errors.js";
import { isUuid, newId } from "../kernel/ids.js";
import { sellerNames } from "../account/account-service.js";
import {
  checkAgreementFile,
  DEFAULT_READING_BUDGETS,
  type ReadingBudgets,
  readAgreementForExtraction,
  requireUploadRoom,
  sha256Hex,
  storedFilename,
  type UploadedFile,
} from "./agreement-upload.js";
import { presentContract } from "./contract-queries.js";
import * as repo from "./contract-repository.js";
import type { Contract } from "./contract-schemas.js";
import { completeNewContract, newContractRow } from "./new-contracts.js";
import { checkUploadTerms, type CheckedTerms } from "./upload-terms.js";
import { extractedTerms } from "../documents/document-pool.js";
import type { ContractExtraction } from "./extraction/extraction-types.js";

/**
 * A staged upload's reading, or null when nothing was read. Uploads staged before agreements were read in any
 * layout hold the older reading's shape (no `object`): within their day they are shown as nothing read.
 */
function storedExtraction(reading: unknown): ContractExtraction | null {
  if (typeof reading !== "object" || reading === null) return null;
  const candidate = reading as Partial<ContractExtraction>;
  return candidate.object === "contract_extraction" &&
    typeof candidate.terms === "object" &&
    candidate.terms !== null &&
    Array.isArray(candidate.fields) &&
    Array.isArray(candidate.warnings)
    ? (candidate as ContractExtraction)
    : null;
}

/** How long a dashboard upload waits for its terms to be reviewed and saved, and how many may wait at once. */
const STAGED_UPLOAD_MS = 24 * 60 * 60 * 1000;
const STAGED_UPLOADS_KEPT = 20;

/** Contracts from their signed agreements: the API's upload in one step, the dashboard's staged for review. */
export function createContractUploads({
  clock,
  publicUrl,
  readings = DEFAULT_READING_BUDGETS,
}: {
  clock: Clock;
  publicUrl: string;
  /** What reading an uploaded agreement may take (compose.ts passes config.ts's). */
  readings?: ReadingBudgets | undefined;
}) {
  /**
   * The customer, the contract with version 1 of its program, and their events, in the caller's transaction:
   * the terms are checked first, so a refusal writes nothing.
   */
  async function createUploaded(
    tx: CompanyScope,
    { terms, rules }: CheckedTerms,
    document: { id: string },
  ): Promise<Contract> {
    let customer: { id: string; name: string };
    if (terms.customer.id !== undefined) {
      const found = await findCustomer(tx, terms.customer.id);
      if (!found) throw new NotFoundError("customer");
      customer = found;
    } else {
      customer = await insertCustomer(tx, clock, { ...terms.customer, name: terms.customer.name! });
    }
    const row = await newContractRow(tx, clock, customer, {
      id: terms.contract_id,
      start_date: terms.start_date,
      end_date: terms.end_date ?? null,
      currency: terms.currency,
      sample: false,
      rules,
      document_id: document.id,
      payment_terms_days: terms.payment_terms_days ?? null,
    });
    if (!(await repo.insertContractUnlessIdTaken(tx, row))) {
      const existing = await repo.findContract(tx, terms.contract_id);
      throw new ConflictError(`A contract with id '${terms.contract_id}' already exists`, "contract_exists", {
        contract: existing ? presentContract(existing, publicUrl) : undefined,
      });
    }
    return completeNewContract(tx, clock, publicUrl, row, rules);
  }

  /** An agreement in any layout, read: the terms it proposes with their sources, and what could not be read. */
  async function readExtraction(tenant: Tenancy, file: UploadedFile): Promise<ContractExtraction> {
    const [reading, names] = await Promise.all([
      readAgreementForExtraction(tenant.companyId, file, readings),
      sellerNames(tenant.data),
    ]);
    const found = await extractedTerms(tenant.companyId, reading.items, { sellerNames: names });
    return {
      object: "contract_extraction",
      terms: found.terms,
      fields: found.fields,
      warnings: [...reading.warnings, ...found.warnings],
    };
  }

  const documentRow = (
    file: UploadedFile,
    reading: ContractExtraction | null,
  ): Omit<repo.ContractDocumentRow, "contract_id"> => ({
    id: newId(),
    filename: storedFilename(file.filename),
    content: file.bytes,
    sha256: sha256Hex(file.bytes),
    reading,
    created_at: clock.now(),
  });

  return {
    /** Refuses (429 too_many_uploads) an upload its company's turn could not take now: asked before its body is read. */
    requireUploadRoom(tenant: Tenancy): void {
      requireScope(tenant, "contracts:write");
      requireUploadRoom(tenant.companyId);
    },

    /**
     * A contract from its signed agreement (API: POST /v1/billing/contracts/upload): the PDF is checked, then
     * stored with the customer (when new), the contract and its program, in one transaction.
     */
    async upload(tenant: Tenancy, file: UploadedFile, rawTerms: unknown): Promise<Contract> {
      requireScope(tenant, "contracts:write");
      // The terms first: they cost nothing to check, the file is parsed in a process of its own.
      const terms = checkUploadTerms(rawTerms);
      await checkAgreementFile(tenant.companyId, file, readings);
      return tenant.transaction(async (tx) => {
        const document = documentRow(file, null);
        await repo.insertDocument(tx, document);
        return createUploaded(tx, terms, document);
      });
    },

    /**
     * The terms an agreement in any layout proposes, each value with its source (API: POST
     * /v1/billing/contracts/extract). Nothing is stored.
     */
    async extract(tenant: Tenancy, file: UploadedFile): Promise<ContractExtraction> {
      requireScope(tenant, "contracts:write");
      return readExtraction(tenant, file);
    },

    /**
     * The dashboard's first step: the checked PDF is kept for a day, with what reading it proposed (as `extract`
     * answers), until the reviewed terms are saved with saveStaged. A company's 20 newest waiting uploads are
     * kept; an older one is gone (its review page answers 404).
     */
    async stageUpload(tenant: Tenancy, file: UploadedFile): Promise<{ id: string; extraction: ContractExtraction }> {
      requireScope(tenant, "contracts:write");
      const extraction = await readExtraction(tenant, file);
      const document = documentRow(file, extraction);
      await tenant.transaction(async (tx) => {
        await repo.deleteStaleDocuments(
          tx,
          new Date(clock.now().getTime() - STAGED_UPLOAD_MS),
          STAGED_UPLOADS_KEPT - 1,
        );
        await repo.insertDocument(tx, document);
      });
      return { id: document.id, extraction };
    },

    /** A staged upload: its file name, what was read from it, and the contract it became (if saved). */
    async staged(tenant: Tenancy, documentId: string) {
      requireScope(tenant, "contracts:write");
      const row = isUuid(documentId) ? await repo.findDocument(tenant.data, documentId) : undefined;
      if (!row) throw new NotFoundError("upload");
      return {
        id: row.id,
        filename: row.filename,
        pdf: row.content,
        extraction: storedExtraction(row.reading),
        contractId: row.contract_id,
      };
    },

    /** Saves reviewed terms with a staged upload; an upload is saved once (409 `upload_saved` after). */
    async saveStaged(tenant: Tenancy, documentId: string, rawTerms: unknown): Promise<Contract> {
      requireScope(tenant, "contracts:write");
      return tenant.transaction(async (tx) => {
        const row = isUuid(documentId) ? await repo.findDocument(tx, documentId, true) : undefined;
        if (!row) throw new NotFoundError("upload");
        // Asked again now that the row is locked: a save that held the lock before has committed its contract,
        // which the locking statement itself (begun before that commit) could not see.
        const saved = await repo.findContractIdOfDocument(tx, documentId);
        if (saved !== undefined) {
          throw new ConflictError(`This upload was already saved as contract '${saved}'`, "upload_saved", {
            contract_id: saved,
          });
        }
        return createUploaded(tx, checkUploadTerms(rawTerms), row);
      });
    },
  };
}
