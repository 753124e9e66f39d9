import { companyData, type Tenancy } from "../kernel/tenancy.js";
import type { Database } from "../../db/database.js";
import { findCompany } from "../access/companies.js";
import { requireScope } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import { agreementPdf } from "../documents/document-pool.js";
import { NotFoundError } from "../kernel/errors.js";
import * as repo from "./contract-repository.js";
import { programOn } from "./program-timeline.js";
import { toDateString } from "../kernel/billing-period.js";

/** A contract's agreement as a PDF: the uploaded file, or the one generated from the contract's program. */
export function createAgreementDocuments({ db, clock }: { db: Database; clock: Clock }) {
  /** The generated agreement of a contract, from the program in force today. */
  async function renderAgreement(contract: repo.ContractRow): Promise<Buffer> {
    const [company, segments] = await Promise.all([
      findCompany(db, contract.company_id),
      repo.findProgramSegments(companyData(db, contract.company_id).data, contract.id),
    ]);
    const program = segments.length > 0 ? programOn(segments, toDateString(clock.now())) : undefined;
    const rules = program?.rules ?? [];
    const minimums = rules.filter((r) => r.type === "minimum");
    // Rendered in the document processes, in the company's turn (documents/document-pool.ts): never on this thread.
    return agreementPdf(contract.company_id, {
      companyName: company?.name ?? "",
      customerName: contract.customer_name,
      contractId: contract.id,
      contractNumber: contract.contract_number,
      startDate: contract.start_date,
      endDate: contract.end_date,
      currency: contract.currency,
      billingCadence: contract.billing_cadence,
      sample: contract.sample,
      programVersion: program?.version ?? contract.current_version,
      rules,
      minimumAmount: minimums.length > 0 ? minimums[0]!.amount : null,
      generatedAt: clock.now(),
    });
  }

  return {
    /**
     * The contract's agreement for its own company: the uploaded PDF as it was sent (`uploaded`: someone's
     * file, which surfaces never show inline), or the generated one.
     */
    async agreementFile(
      tenant: Tenancy,
      contractId: string,
    ): Promise<{ filename: string; pdf: Buffer; uploaded: boolean }> {
      requireScope(tenant, "contracts:read");
      const contract = await repo.findContract(tenant.data, contractId);
      if (!contract) throw new NotFoundError("contract");
      if (contract.document_id === null)
        return { filename: `${contract.contract_number}.pdf`, pdf: await renderAgreement(contract), uploaded: false };
      const document = await repo.findDocument(tenant.data, contract.document_id);
      if (!document) throw new NotFoundError("agreement");
      return { filename: document.filename, pdf: document.content, uploaded: true };
    },

    /** The agreement PDF behind a `pdf_url` (no API key: the token in the URL is the capability). */
    async agreementPdf(token: string): Promise<Buffer> {
      const contract = /^[A-Za-z0-9_-]{43}$/.test(token) ? await repo.findContractByPdfToken(db, token) : undefined;
      // An uploaded agreement has no public link: its token is never handed out, and is refused all the same.
      if (!contract || contract.document_id !== null) throw new NotFoundError("agreement");
      return renderAgreement(contract);
    },
  };
}
