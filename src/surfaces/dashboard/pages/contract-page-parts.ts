// What the contract pages share (docs/dashboard.md, "Contracts"): a contract's status as a badge, the flashes
// of `?done=` (the list and a contract's page both show them), a customer as the lists to choose one name it,
// and the program in force today with the scheduled versions, which the page shows and a previewed change
// starts from. The list is contract-pages.ts, an upload contract-upload-pages.ts, a contract's page
// contract-detail-pages.ts, its rule forms contract-rule-forms.ts and contract-rule-pages.ts.
import type { Contract } from "../../../domain/contracts/contract-schemas.js";
import type { Customer } from "../../../domain/customers/customer-schemas.js";
import { NotFoundError } from "../../../domain/kernel/errors.js";
import type { DashboardDeps, Viewer } from "../page-kit.js";
import { badge, type Flash } from "../layout.js";

export const DONE: Record<string, Flash> = {
  created: { kind: "ok", message: "Sample contract created." },
  uploaded: {
    kind: "ok",
    message: "Contract saved with its signed agreement. Usage sent with its id is rated from now on.",
  },
  "rule-added": { kind: "ok", message: "Rule added: the program has a new version, used for usage from now on." },
  "rule-changed": { kind: "ok", message: "Rule changed: the program has a new version, used for usage from now on." },
  "rule-added-dated": {
    kind: "ok",
    message:
      "Rule added from the date given: usage from that day on is priced with it (open draft invoices from that day were priced again).",
  },
  "rule-changed-dated": {
    kind: "ok",
    message:
      "Rule changed from the date given: usage from that day on is priced with it (open draft invoices from that day were priced again).",
  },
  "credit-granted": {
    kind: "ok",
    message: "Credit granted: usage burns it as it is rated, from its start date. See it under Credits.",
  },
  "prepaid-granted": {
    kind: "ok",
    message:
      "Prepaid credit granted and billed as a one-time line on the contract's draft invoice (see its invoice under Credits). Usage burns it as it is rated, from its start date.",
  },
};

const STATUS_TONE: Record<Contract["status"], "ok" | "bad" | "warn" | "plain"> = {
  draft: "plain",
  active: "ok",
  completed: "plain",
  cancelled: "warn",
  terminated: "bad",
};

export const statusBadge = (status: Contract["status"]) => badge(status, STATUS_TONE[status] ?? "plain");

/** A customer in the lists to choose one from (a sample's, an upload's): its name, and its external id if any. */
export const customerLabel = (c: Customer) => (c.external_id ? `${c.name} (${c.external_id})` : c.name);

/** The version in force today with the scheduled ones, or none when the contract has no program. */
export async function pricingOf(deps: DashboardDeps, viewer: Viewer, contractId: string) {
  try {
    return await deps.services.contracts.getPricing(viewer.session.actor, contractId);
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

export type Pricing = NonNullable<Awaited<ReturnType<typeof pricingOf>>>;
