import type { Tenancy } from "../kernel/tenancy.js";
import { requireScope } from "../kernel/actor.js";
import { NotFoundError } from "../kernel/errors.js";
import * as repo from "./contract-repository.js";
import type { Contract } from "./contract-schemas.js";

/** A contract as every surface answers it, and as its `contract.created` event carries it. */
export function presentContract(row: repo.ContractRow, publicUrl: string): Contract {
  return {
    object: "contract",
    id: row.id,
    customer_id: row.customer_id,
    customer_name: row.customer_name,
    contract_number: row.contract_number,
    status: row.status as Contract["status"],
    start_date: row.start_date,
    end_date: row.end_date,
    currency: row.currency,
    billing_cadence: row.billing_cadence,
    metrics: row.metrics,
    pdf_url: agreementUrl(row, publicUrl),
    sample: row.sample,
    payment_terms_days: row.payment_terms_days,
    created_at: row.created_at.toISOString(),
  };
}

// A generated agreement is a capability link anyone holding it may open; an uploaded one is served only
// to its own company, behind an API key (docs/api.md, "Uploading a contract").
const agreementUrl = (row: repo.ContractRow, publicUrl: string) =>
  row.document_id === null
    ? `${publicUrl}/v1/agreements/${row.pdf_token}.pdf`
    : `${publicUrl}/v1/billing/contracts/${encodeURIComponent(row.id)}/agreement.pdf`;

/** Reading contracts: the company's list and one by id. */
export function createContractQueries({ publicUrl }: { publicUrl: string }) {
  return {
    async list(tenant: Tenancy, status: string | undefined): Promise<Contract[]> {
      requireScope(tenant, "contracts:read");
      return (await repo.listContracts(tenant.data, status)).map((row) => presentContract(row, publicUrl));
    },

    async get(tenant: Tenancy, contractId: string): Promise<Contract> {
      requireScope(tenant, "contracts:read");
      const row = await repo.findContract(tenant.data, contractId);
      if (!row) throw new NotFoundError("contract");
      return presentContract(row, publicUrl);
    },
  };
}
