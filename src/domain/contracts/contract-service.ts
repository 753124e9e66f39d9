import type { Database } from "../../db/database.js";
import type { ReadingBudgets } from "./agreement-upload.js";
import type { Clock } from "../kernel/clock.js";
import { createAgreementDocuments } from "./agreement-documents.js";
import { createContractQueries } from "./contract-queries.js";
import { createContractUploads } from "./contract-uploads.js";
import { createPricingVersions, type RepriceFrom } from "./pricing-versions.js";
import { createSampleContracts } from "./sample-contracts.js";
import type { RatingContextCache } from "./rating-context-cache.js";

/**
 * The contracts every surface uses (`services.contracts`), one job per file: reading them (contract-queries),
 * sample contracts (sample-contracts), uploaded agreements (contract-uploads), pricing program versions
 * (pricing-versions) and the agreement PDF (agreement-documents).
 */
export function createContractService(deps: {
  db: Database;
  clock: Clock;
  publicUrl: string;
  contexts: RatingContextCache;
  /** What a dated pricing change does to usage already billed (usage/reprice.ts), wired in domain/services.ts. */
  repriceFrom: RepriceFrom;
  /** What reading an uploaded agreement may take. */
  readings?: ReadingBudgets | undefined;
}) {
  return {
    ...createContractQueries(deps),
    ...createSampleContracts(deps),
    ...createContractUploads(deps),
    ...createPricingVersions(deps),
    ...createAgreementDocuments(deps),
  };
}
