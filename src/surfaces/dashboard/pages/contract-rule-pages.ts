// Changing a contract's pricing program from its page (docs/dashboard.md, "Voids, dated changes and previews"): the
// posted rule forms (contract-rule-forms.ts) saved through the same service calls as the API's addPricingRule and
// updatePricingRule, or previewed: the whole program as it would be, priced against this month's stored usage beside
// the month's invoice as it stands; nothing of a preview is stored. Registered by contract-detail-pages.ts, which
// renders the page these routes answer with.
import type { FastifyInstance } from "fastify";
import {
  addPricingRuleBody,
  toRuleChange,
  updatePricingRuleBody,
  type Contract,
} from "../../../domain/contracts/contract-schemas.js";
import type { PresentedRule, RuleFields } from "../../../domain/contracts/pricing-rule.js";
import type { PricingPreview } from "../../../domain/invoices/invoice-schemas.js";
import { parseDate, periodOf, requireDayInTerm, type BillingPeriod } from "../../../domain/kernel/billing-period.js";
import { NotFoundError, ValidationError } from "../../../domain/kernel/errors.js";
import {
  field,
  formOf,
  parseWith,
  seeOther,
  sendPage,
  viewerOf,
  type DashboardDeps,
  type FieldErrors,
  type Viewer,
} from "../page-kit.js";
import { html, type SafeHtml } from "../html.js";
import { monthName } from "../format.js";
import type { GrantValues } from "./credit-pages.js";
import { pricingOf } from "./contract-page-parts.js";
import {
  ADD_FIELDS,
  CHANGE_FIELDS,
  previewFieldOf,
  ruleFormFailure,
  ruleInputOf,
  valuesOf,
  type AddValues,
  type ChangeValues,
} from "./contract-rule-forms.js";
import { contractPath, dataTable, decimal, emptyState, link, money, type Flash } from "../layout.js";

/** What the rule forms show: blank, or what was typed when the service refused it (or when it was previewed). */
export interface RuleForms {
  add?: AddValues;
  change?: ChangeValues;
  /** The "Grant credit" form as typed, when the service refused it (credit-pages.ts). */
  grant?: GrantValues;
  /** The refused form's errors, by field name. */
  errors?: FieldErrors;
  /** The previewed change, priced against a month: shown under the forms. Nothing of it is stored. */
  preview?: { result: PricingPreview; effectiveDate: string | null };
}

/** A contract's page with the forms as `forms` has them (contract-detail-pages.ts). */
type ContractPage = (viewer: Viewer, contractId: string, flash?: Flash, forms?: RuleForms) => Promise<string>;

/**
 * The month a preview prices: this calendar month by the service's clock (UTC); when that month lies outside the
 * contract's term, the term's first month.
 */
function previewMonth(now: Date, contract: Contract): BillingPeriod {
  const month = periodOf(now);
  const outside = month.end < contract.start_date || (contract.end_date !== null && month.start > contract.end_date);
  return outside ? periodOf(parseDate(contract.start_date) ?? now) : month;
}

/** A rule as the API presents it, as the fields a program is sent with: what it has, its nulls left out. */
function fieldsOfRule(rule: PresentedRule): RuleFields {
  return Object.fromEntries(Object.entries(rule).filter(([, value]) => value !== null)) as RuleFields;
}

/** An update's fields merged into a rule as the service merges them: each field sent replaces it, null clears it. */
function mergedRule(rule: PresentedRule, fields: RuleFields): RuleFields {
  const merged: Record<string, unknown> = { ...fieldsOfRule(rule) };
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    if (value === null) delete merged[name];
    else merged[name] = value;
  }
  return merged as RuleFields;
}

/**
 * The program in force today with a change made to it (`change`: the rules, and the index of the changed one),
 * priced against this month. A refusal of the changed rule's fields names them as the form does (`rules.3.amount`
 * → amount): see `previewFieldOf`.
 */
async function previewChange(
  deps: DashboardDeps,
  viewer: Viewer,
  contractId: string,
  effectiveDate: string | null,
  change: (rules: readonly PresentedRule[]) => RuleFields[],
): Promise<PricingPreview> {
  const actor = viewer.session.actor;
  const contract = await deps.services.contracts.get(actor, contractId);
  // A date that saving would refuse is refused here too, in the same words (pricing-versions.ts).
  if (effectiveDate !== null) requireDayInTerm(effectiveDate, contract);
  const pricing = await pricingOf(deps, viewer, contract.id);
  const month = previewMonth(deps.clock.now(), contract);
  return deps.services.usage.previewPricing(actor, contract.id, {
    rules: change(pricing?.rules ?? []),
    periodStart: month.start,
    periodEnd: month.end,
  });
}

/** The previewed change beside the month's invoice as it stands: both totals and the difference per line. */
export function previewPanel(
  contract: Contract,
  preview: PricingPreview,
  effectiveDate: string | null,
  saveButton: string,
): SafeHtml {
  const currency = preview.currency;
  const month = monthName(preview.billing_period.start);
  const actualName =
    preview.actual.number === null
      ? "no invoice yet"
      : html`invoice <a href="/invoices/${encodeURIComponent(preview.actual.number)}">${preview.actual.number}</a>, ${preview.actual.status ?? ""}`;
  const signed = (amount: PricingPreview["difference"]["total"]) => {
    const words = money(amount, currency);
    return Number(String(amount)) > 0 ? `+${words}` : words;
  };
  const lines =
    preview.difference.lines.length === 0
      ? emptyState(`Neither invoice of ${month} has a line.`)
      : dataTable(
          `Differences per line, ${month}`,
          [
            {
              header: "Line",
              cell: (l) => html`${l.description} <span class="hint">(${l.kind.replace("_", "-")})</span>`,
            },
            { header: "Now", cell: (l) => money(l.actual_amount, currency), numeric: true },
            { header: "With the change", cell: (l) => money(l.preview_amount, currency), numeric: true },
            { header: "Difference", cell: (l) => signed(l.difference), numeric: true },
          ],
          preview.difference.lines,
        );
  const unpriced =
    preview.unpriced_events > 0
      ? html`<p class="alert warn">${decimal(preview.unpriced_events)} ${preview.unpriced_events === 1 ? "event has" : "events have"} no rule in the changed program: ${preview.unpriced_events === 1 ? "it is" : "they are"} left out of the preview's total.</p>`
      : "";
  const dated =
    effectiveDate === null
      ? ""
      : html`<p class="hint">The preview prices the whole month with the changed program; saved, the change applies to usage from ${effectiveDate}.</p>`;
  return html`<section class="card preview" id="pricing-preview" aria-labelledby="pricing-preview-heading">
<h2 id="pricing-preview-heading">Preview: ${month} with this change</h2>
<p class="alert warn" role="status">Preview only: nothing has been saved. Press “${saveButton}” to save the change.</p>
<p class="hint">${contract.id}, ${preview.billing_period.start} to ${preview.billing_period.end}: ${decimal(preview.events)} stored ${preview.events === 1 ? "event" : "events"} priced again (voided events left out).</p>
${dated}${unpriced}
<dl class="facts">
<dt>Total now</dt><dd>${money(preview.actual.total, currency)} <span class="hint">(${actualName})</span></dd>
<dt>Total with the change</dt><dd>${money(preview.preview.total, currency)}</dd>
<dt>Difference</dt><dd>${signed(preview.difference.total)}</dd>
</dl>
<h3>Per line</h3>
${lines}
</section>`;
}

/** The routes that add a rule and change a rule's price, under /contracts/:id/rules. */
export async function contractRulePages(
  app: FastifyInstance,
  deps: DashboardDeps,
  contractPage: ContractPage,
): Promise<void> {
  app.post<{ Params: { id: string } }>("/contracts/:id/rules", async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const values = valuesOf(form, ADD_FIELDS);
    const previewing = field(form, "action") === "preview";
    let index: number | undefined;
    try {
      const { fields, effectiveDate } = toRuleChange(parseWith(addPricingRuleBody, ruleInputOf(values)));
      if (previewing) {
        const result = await previewChange(deps, viewer, request.params.id, effectiveDate, (rules) => {
          index = rules.length;
          return [...rules.map(fieldsOfRule), fields];
        });
        return sendPage(
          reply,
          await contractPage(viewer, request.params.id, undefined, {
            add: values,
            preview: { result, effectiveDate },
          }),
        );
      }
      const added = await deps.services.contracts.addRule(viewer.session.actor, request.params.id, {
        fields,
        effectiveDate,
      });
      return seeOther(
        reply,
        link(contractPath(added.contract), { done: effectiveDate === null ? "rule-added" : "rule-added-dated" }),
      );
    } catch (error) {
      const { status, flash, fields } = ruleFormFailure(error, previewFieldOf(index), values);
      return sendPage(
        reply,
        await contractPage(viewer, request.params.id, flash, { add: values, errors: fields }),
        status,
      );
    }
  });

  app.post<{ Params: { id: string } }>("/contracts/:id/rules/change", async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const { rule_id: ruleId, ...prices } = valuesOf(form, CHANGE_FIELDS);
    const previewing = field(form, "action") === "preview";
    let index: number | undefined;
    try {
      if (ruleId === undefined)
        throw new ValidationError("Choose the rule to change", "invalid_request", [
          { path: "rule_id", message: "Choose the rule to change." },
        ]);
      if (prices.amount === undefined && prices.rate === undefined) {
        throw new ValidationError(
          "Give a new amount (flat rules) or a new rate (percentage rules)",
          "invalid_request",
          [{ path: "amount", message: "Give a new amount (flat rules) or a new rate (percentage rules)." }],
        );
      }
      const { fields, effectiveDate } = toRuleChange(parseWith(updatePricingRuleBody, ruleInputOf(prices)));
      if (previewing) {
        const result = await previewChange(deps, viewer, request.params.id, effectiveDate, (rules) => {
          index = rules.findIndex((r) => r.id === ruleId);
          if (index < 0) throw new NotFoundError("pricing_rule");
          return rules.map((r, i) => (i === index ? mergedRule(r, fields) : fieldsOfRule(r)));
        });
        return sendPage(
          reply,
          await contractPage(viewer, request.params.id, undefined, {
            change: { rule_id: ruleId, ...prices },
            preview: { result, effectiveDate },
          }),
        );
      }
      const changed = await deps.services.contracts.updateRule(viewer.session.actor, request.params.id, ruleId, {
        fields,
        effectiveDate,
      });
      return seeOther(
        reply,
        link(contractPath(changed.contract), {
          done: effectiveDate === null ? "rule-changed" : "rule-changed-dated",
        }),
      );
    } catch (error) {
      const { status, flash, fields } = ruleFormFailure(error, previewFieldOf(index), prices);
      return sendPage(
        reply,
        await contractPage(viewer, request.params.id, flash, {
          change: { rule_id: ruleId, ...prices },
          errors: fields,
        }),
        status,
      );
    }
  });
}
