import type { Tenancy } from "../kernel/tenancy.js";
import { findCustomer } from "../customers/customer-service.js";
import { requireScope } from "../kernel/actor.js";
import { termEnd, toDateString } from "../kernel/billing-period.js";
import type { Clock } from "../kernel/clock.js";
import { ConflictError, NotFoundError } from "../kernel/errors.js";
import * as repo from "./contract-repository.js";
import type { Contract } from "./contract-schemas.js";
import { completeNewContract, newContractRow } from "./new-contracts.js";
import { normalizeRule, type PricingRule, type RuleFields } from "./pricing-rule.js";

/** The id stem of a sample contract: the customer's name, lower-cased, in ASCII letters, digits and dashes. */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48)
    .replace(/-+$/g, "");
  return slug || "customer";
}

const compactTimestamp = (date: Date) => date.toISOString().replace(/\D/g, "").slice(0, 14);

/** The sample program (docs/api.md, "Contracts"; docs/decisions.md, "Invoices"): two wire metrics and a 1000 USD monthly minimum. */
export function sampleRules(): PricingRule[] {
  const rule = (fields: RuleFields) => {
    const result = normalizeRule(fields, "USD");
    if (!result.rule) throw new Error("invalid sample rule");
    return result.rule;
  };
  return [
    rule({ name: "Domestic wire", type: "usage", model: "flat", metric: "domestic_wire", amount: "20.00" }),
    rule({ name: "International wire", type: "usage", model: "flat", metric: "international_wire", amount: "30.00" }),
    rule({ name: "Monthly minimum", type: "minimum", model: "flat", amount: "1000.00", frequency: "monthly" }),
  ];
}

export function createSampleContracts({ clock, publicUrl }: { clock: Clock; publicUrl: string }) {
  return {
    /**
     * Creates an active sample contract for a customer (docs/api.md, "Contracts") with its program version 1 and its
     * `contract.created` event, in one transaction.
     */
    async createSample(tenant: Tenancy, customerId: string): Promise<Contract> {
      requireScope(tenant, "contracts:write");
      return tenant.transaction(async (tx) => {
        const customer = await findCustomer(tx, customerId);
        if (!customer) throw new NotFoundError("customer");
        const now = clock.now();
        const rules = sampleRules();
        const startDate = toDateString(now);
        const row = await newContractRow(tx, clock, customer, {
          id: "",
          start_date: startDate,
          end_date: termEnd(startDate, 1),
          currency: "USD",
          sample: true,
          rules,
          document_id: null,
        });
        // `{slug}-test`, then with a timestamp suffix, then numbered: whichever is free (checked by the insert itself).
        const stem = `${slugify(customer.name)}-test`;
        const candidates = [stem, `${stem}-${compactTimestamp(now)}`];
        for (let n = 2; n < 50; n++) candidates.push(`${stem}-${compactTimestamp(now)}-${n}`);
        let inserted = false;
        for (const id of candidates) {
          row.id = id;
          if (await repo.insertContractUnlessIdTaken(tx, row)) {
            inserted = true;
            break;
          }
        }
        if (!inserted) throw new ConflictError("Could not find a free contract id; try again", "contract_id_taken");
        return completeNewContract(tx, clock, publicUrl, row, rules);
      });
    },
  };
}
