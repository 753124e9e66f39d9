import type { CompanyScope } from "../../db/company-scope.js";
import { randomBytes } from "node:crypto";
import { nextNumbers } from "../counters/counters.js";
import type { Clock } from "../kernel/clock.js";
import { recordEvent } from "../webhooks/outbox.js";
import { presentContract } from "./contract-queries.js";
import * as repo from "./contract-repository.js";
import type { Contract } from "./contract-schemas.js";
import { metricsOf, type PricingRule } from "./pricing-rule.js";

/** What a new contract is made of, whichever way it comes (a sample, an upload). */
export interface NewContractTerms {
  id: string;
  start_date: string;
  end_date: string | null;
  currency: string;
  sample: boolean;
  rules: PricingRule[];
  document_id: string | null;
  payment_terms_days?: number | null;
}

/** A new contract's row, not yet inserted: numbered (the company's next `CTR-` number), active, monthly, version 1. */
export async function newContractRow(
  tx: CompanyScope,
  clock: Clock,
  customer: { id: string; name: string },
  terms: NewContractTerms,
): Promise<repo.ContractRow> {
  const number = await nextNumbers(tx, "contract_number", 1);
  return {
    company_id: tx.companyId,
    id: terms.id,
    contract_number: `CTR-${String(number).padStart(6, "0")}`,
    customer_id: customer.id,
    customer_name: customer.name,
    status: "active",
    start_date: terms.start_date,
    end_date: terms.end_date,
    currency: terms.currency,
    billing_cadence: "monthly",
    sample: terms.sample,
    current_version: 1,
    metrics: metricsOf(terms.rules),
    pdf_token: randomBytes(32).toString("base64url"),
    document_id: terms.document_id,
    payment_terms_days: terms.payment_terms_days ?? null,
    created_at: clock.now(),
  };
}

/** After the contract row is in: version 1 of its program and its `contract.created` event. */
export async function completeNewContract(
  tx: CompanyScope,
  clock: Clock,
  publicUrl: string,
  row: repo.ContractRow,
  rules: PricingRule[],
): Promise<Contract> {
  await repo.insertProgramVersion(tx, {
    company_id: row.company_id,
    contract_id: row.id,
    version: 1,
    effective_date: row.start_date,
    applies_from: row.start_date,
    rules,
    created_at: row.created_at,
  });
  const contract = presentContract(row, publicUrl);
  await recordEvent(tx, clock, "contract.created", contract);
  return contract;
}
