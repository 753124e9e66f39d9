// A contract's page (docs/dashboard.md, "Contracts"): its facts and agreement, its pricing program in force with
// the versions scheduled after it, the forms that change the program (contract-rule-pages.ts) and a previewed
// change, its credits (credit-pages.ts), and the program's history, each version compared with the one before
// it. Registered by contract-pages.ts.
import type { FastifyInstance } from "fastify";
import type { Contract } from "../../../domain/contracts/contract-schemas.js";
import {
  versionHistoryDiff,
  type DiffedRuleField,
  type RuleDiff,
  type VersionDiff,
} from "../../../domain/contracts/pricing-diff.js";
import type { PresentedRule } from "../../../domain/contracts/pricing-rule.js";
import { rulePriceWords } from "../../../domain/contracts/rule-price-wording.js";
import { formOf, seeOther, sendPage, viewerOf, type DashboardDeps, type Viewer } from "../page-kit.js";
import { html, type HtmlValue, type SafeHtml } from "../html.js";
import { sendPdf } from "../../http/send-documents.js";
import { creditsSection, grantFailure, grantInputOf, grantPage, grantValuesOf } from "./credit-pages.js";
import { DONE, type Pricing, pricingOf, statusBadge } from "./contract-page-parts.js";
import { addRuleForm, changeRuleForm } from "./contract-rule-forms.js";
import { contractRulePages, previewPanel, type RuleForms } from "./contract-rule-pages.js";
import {
  badge,
  contractPath,
  dataTable,
  doneFlash,
  emptyState,
  link,
  money,
  page,
  when,
  type Flash,
} from "../layout.js";

const FIELD_LABEL: Record<DiffedRuleField, string> = {
  name: "name",
  type: "type",
  model: "model",
  amount: "amount",
  rate: "rate",
  metric: "metric",
  frequency: "frequency",
  monthly_cap: "monthly cap",
  currency: "currency",
  counterparty: "counterparty",
  counterparty_side: "counterparty side",
  pair: "pair",
  tiers: "tiers",
  package_size: "package size",
  fixed_fee: "fixed fee",
  min_fee: "minimum fee",
  max_fee: "maximum fee",
  allow_rate_above_one: "rate above 100 % allowed",
};

function scopeOf(rule: PresentedRule): string {
  if (rule.type !== "usage") return "—";
  const parts = [
    rule.counterparty ? `counterparty ${rule.counterparty}` : undefined,
    rule.counterparty_side ? `side ${rule.counterparty_side}` : undefined,
    rule.pair ? `pair ${rule.pair}` : undefined,
  ].filter((p): p is string => p !== undefined);
  return parts.length === 0 ? "all events" : parts.join(", ");
}

function rulesTable(caption: string, rules: readonly PresentedRule[]): SafeHtml {
  if (rules.length === 0) return emptyState("This pricing program has no rules.");
  return dataTable(
    caption,
    [
      { header: "Name", cell: (r) => r.name },
      { header: "Type", cell: (r) => r.type.replace("_", "-") },
      { header: "Model", cell: (r) => r.model },
      { header: "Metric", cell: (r) => (r.metric ? html`<code>${r.metric}</code>` : "—") },
      // A price in words ("graduated: $0.05 per unit up to 1,000; …") wraps in its column: not a figure kept on one line.
      { header: "Price", cell: priceCell },
      { header: "Monthly cap", cell: (r) => (r.monthly_cap ? money(r.monthly_cap, r.currency) : "—"), numeric: true },
      { header: "Frequency", cell: (r) => r.frequency ?? "—" },
      { header: "Applies to", cell: (r) => scopeOf(r) },
      { header: "Rule id", cell: (r) => html`<code>${r.id}</code>` },
    ],
    rules,
    { stacked: true },
  );
}

/** A rule's price in words; a percentage rule's rate also as the fraction stored, which the API sends and takes. */
function priceCell(rule: PresentedRule): HtmlValue {
  const words = rulePriceWords(rule);
  return rule.model === "percentage" && rule.rate !== null
    ? html`${words} <span class="hint">(rate stored as <code>${String(rule.rate)}</code>)</span>`
    : words;
}

/** One line about a rule for the history: its name and what it charges. */
const ruleLine = (rule: PresentedRule): SafeHtml =>
  html`<strong>${rule.name}</strong> <span class="hint">(${rule.type.replace("_", "-")}${rule.metric ? html`, metric <code>${rule.metric}</code>` : ""}; <code>${rule.id}</code>)</span>: ${rulePriceWords(rule)}${
    rule.monthly_cap ? `, capped at ${money(rule.monthly_cap, rule.currency)} a month` : ""
  }${rule.frequency ? `, ${rule.frequency}` : ""}`;

const shown = (value: string | null) => (value === null ? html`<em>none</em>` : html`<code>${value}</code>`);

function diffItem(diff: RuleDiff): SafeHtml {
  // The words carry the meaning; the colours (diff-add, diff-del, diff-chg) only repeat it.
  if (diff.kind === "added")
    return html`<li class="diff-add"><span class="diff-kind">Added</span> ${ruleLine(diff.rule)}</li>`;
  if (diff.kind === "removed")
    return html`<li class="diff-del"><span class="diff-kind">Removed</span> ${ruleLine(diff.rule)}</li>`;
  return html`<li class="diff-chg"><span class="diff-kind">Changed</span> <strong>${diff.after.name}</strong> <span class="hint">(<code>${diff.after.id}</code>)</span>
<ul class="diff-fields">${diff.changes.map(
    (c) =>
      html`<li>${FIELD_LABEL[c.field]}: <del>${shown(c.before)}</del> <span aria-hidden="true">→</span><span class="visually-hidden">changed to</span> <ins>${shown(c.after)}</ins></li>`,
  )}</ul></li>`;
}

function historySection(history: VersionDiff[], current: number, scheduled: ReadonlySet<number>): SafeHtml {
  if (history.length === 0) return emptyState("This contract has no pricing program versions.");
  return html`<ol class="versions" reversed>${history.map((v) => {
    const headingId = `version-${v.version}`;
    const kept =
      v.unchanged > 0
        ? html`<p class="hint">${v.unchanged === 1 ? "1 rule" : `${v.unchanged} rules`} unchanged.</p>`
        : "";
    const changes: HtmlValue =
      v.diffs.length === 0
        ? html`<p>No rule changed in this version.</p>`
        : html`<ul class="diff-list">${v.diffs.map(diffItem)}</ul>`;
    return html`<li class="card version">
<h3 id="${headingId}">Version ${v.version}${v.version === current ? html` ${badge("current", "ok")}` : scheduled.has(v.version) ? html` ${badge("scheduled", "warn")}` : ""}</h3>
<p class="hint">Effective ${v.effective_date}${v.created_at ? html` · written ${when(v.created_at)}` : ""}${v.version === 1 ? " · the first version" : ` · compared with version ${v.version - 1}`}</p>
${changes}${kept}
</li>`;
  })}</ol>`;
}

/** The metrics a grant may be limited to: the contract's, and those of its program today and scheduled. */
function metricsOfContract(contract: Contract, pricing: Pricing | undefined): string[] {
  const rules = [...(pricing?.rules ?? []), ...(pricing?.upcoming.flatMap((v) => v.rules) ?? [])];
  const metrics = new Set([...contract.metrics, ...rules.map((r) => r.metric).filter((m): m is string => !!m)]);
  return [...metrics].sort();
}

/** The versions that come into force after today: when, and which version. */
function scheduledSection(upcoming: Pricing["upcoming"]): SafeHtml {
  if (upcoming.length === 0) return html``;
  return html`<section class="card" aria-labelledby="scheduled-changes">
<h2 id="scheduled-changes">Scheduled changes</h2>
<p class="hint">Versions of the program that come into force later; usage from each day on is priced with it.</p>
<ul class="scheduled">${upcoming.map(
    (v) =>
      html`<li>From <strong>${v.effective_date}</strong>: <a href="#version-${v.version}">version ${v.version}</a> <span class="hint">(${v.rules.length === 1 ? "1 rule" : `${v.rules.length} rules`})</span></li>`,
  )}</ul>
</section>`;
}

async function detailPage(
  deps: DashboardDeps,
  viewer: Viewer,
  contractId: string,
  flash?: Flash,
  forms: RuleForms = {},
): Promise<string> {
  const actor = viewer.session.actor;
  const contract = await deps.services.contracts.get(actor, contractId);
  const versions = await deps.services.contracts.pricingHistory(actor, contract.id);
  const pricing = await pricingOf(deps, viewer, contract.id);
  const facts = html`<div class="card"><dl class="facts">
<dt>Contract id</dt><dd><code>${contract.id}</code> <span class="hint">(send it as external_contract_id on usage events)</span></dd>
<dt>Number</dt><dd>${contract.contract_number}</dd>
<dt>Customer</dt><dd><a href="/customers/${contract.customer_id}">${contract.customer_name}</a></dd>
<dt>Status</dt><dd>${statusBadge(contract.status)}</dd>
<dt>Term</dt><dd>${contract.start_date} to ${contract.end_date ?? "open-ended"}</dd>
<dt>Currency</dt><dd>${contract.currency}</dd>
<dt>Billing cadence</dt><dd>${contract.billing_cadence}</dd>
<dt>Payment terms</dt><dd>${contract.payment_terms_days === null ? "the customer's (else the account's default)" : `Net ${contract.payment_terms_days}`}</dd>
<dt>Sample</dt><dd>${contract.sample ? "yes, a sample contract" : "no"}</dd>
<dt>Metrics</dt><dd>${contract.metrics.length === 0 ? "—" : html`${contract.metrics.map((m, i) => html`${i > 0 ? ", " : ""}<code>${m}</code>`)}`}</dd>
<dt>Created</dt><dd>${when(contract.created_at)}</dd>
<dt>Agreement</dt><dd>${
    contract.sample || contract.pdf_url.includes("/v1/agreements/")
      ? html`<a href="${contract.pdf_url}">Agreement PDF</a> <span class="hint">(generated; anyone with this link can open it)</span>`
      : html`<a href="${contractPath(contract.id)}/agreement.pdf">Signed agreement (PDF)</a> <span class="hint">(as uploaded; only your company can open it)</span>`
  }</dd>
</dl></div>`;
  const program = pricing
    ? html`<h2>Pricing program</h2><p class="hint">Version ${pricing.version}, in force since ${pricing.effective_date}.</p>${rulesTable(
        `Pricing rules, version ${pricing.version}`,
        pricing.rules,
      )}${scheduledSection(pricing.upcoming)}`
    : html`<h2>Pricing program</h2>${emptyState("This contract has no pricing program yet.")}`;
  const errors = forms.errors ?? {};
  const change = html`<div class="grid">${addRuleForm(viewer, contract, forms.add, forms.add ? errors : {})}${changeRuleForm(viewer, contract, pricing?.rules ?? [], forms.change, forms.change ? errors : {})}</div>`;
  const preview = forms.preview
    ? previewPanel(contract, forms.preview.result, forms.preview.effectiveDate, forms.add ? "Add rule" : "Change price")
    : "";
  const credits = creditsSection(
    viewer,
    contract,
    await deps.services.credits.list(actor, contract.id),
    metricsOfContract(contract, pricing),
    forms.grant,
    forms.grant ? errors : {},
  );
  const history = html`<h2>Version history</h2><p class="hint">Newest first; each version compared with the one before it.</p>${historySection(
    versionHistoryDiff(versions),
    pricing?.version ?? 0,
    new Set(pricing?.upcoming.map((v) => v.version) ?? []),
  )}`;
  return page(
    viewer.ctx,
    `Contract ${contract.id}`,
    html`<p><a href="/contracts">← All contracts</a></p>${facts}${program}${change}${preview}${credits}${history}`,
    { flash },
  );
}

/** The routes of a contract's page and its actions, under /contracts/:id. */
export async function contractDetailPages(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get<{ Params: { id: string } }>("/contracts/:id/agreement.pdf", async (request, reply) => {
    return sendPdf(
      reply,
      await deps.services.contracts.agreementFile(viewerOf(request).session.actor, request.params.id),
      "inline",
    );
  });

  app.get<{ Params: { id: string }; Querystring: { done?: string } }>("/contracts/:id", async (request, reply) => {
    const viewer = viewerOf(request);
    return sendPage(reply, await detailPage(deps, viewer, request.params.id, doneFlash(DONE, request.query.done)));
  });

  app.post<{ Params: { id: string } }>("/contracts/:id/credits", async (request, reply) => {
    const viewer = viewerOf(request);
    const values = grantValuesOf(formOf(request));
    try {
      const granted = await deps.services.credits.grant(viewer.session.actor, request.params.id, grantInputOf(values));
      return seeOther(
        reply,
        link(contractPath(granted.contract), {
          done: granted.type === "prepaid" ? "prepaid-granted" : "credit-granted",
        }),
      );
    } catch (error) {
      const { status, flash, fields } = grantFailure(error);
      return sendPage(
        reply,
        await detailPage(deps, viewer, request.params.id, flash, { grant: values, errors: fields }),
        status,
      );
    }
  });

  app.get<{ Params: { id: string; grantId: string } }>("/contracts/:id/credits/:grantId", async (request, reply) => {
    const viewer = viewerOf(request);
    const actor = viewer.session.actor;
    const contract = await deps.services.contracts.get(actor, request.params.id);
    const grant = await deps.services.credits.get(actor, contract.id, request.params.grantId);
    return sendPage(reply, grantPage(viewer, contract, grant));
  });

  await contractRulePages(app, deps, (viewer, contractId, flash, forms) =>
    detailPage(deps, viewer, contractId, flash, forms),
  );
}
