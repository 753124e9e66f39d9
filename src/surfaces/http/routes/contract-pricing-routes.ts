// A contract's pricing program and its credit grants (docs/api.md, "Pricing programs and rules", "Credits"): the
// version in force, a program previewed against a month's stored usage, rules added and changed (each a new
// version, or one dated from a day), and the grants that pay for its usage. The contract itself is
// contract-routes.ts, registered just before this plugin so that the OpenAPI document lists the contract's
// operations first.
import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { z } from "zod";
import {
  addPricingRuleBody,
  pricingPreviewInput,
  pricingProgramSchema,
  pricingRuleResponseSchema,
  toRuleChange,
  updatePricingRuleBody,
} from "../../../domain/contracts/contract-schemas.js";
import { createCreditGrantInput, creditGrantSchema } from "../../../domain/credits/credit-schemas.js";
import { pricingPreviewSchema } from "../../../domain/invoices/invoice-schemas.js";
import type { Clock } from "../../../domain/kernel/clock.js";
import { addDays, periodOf, termEnd, toDateString } from "../../../domain/kernel/billing-period.js";
import type { Services } from "../../../domain/services.js";
import { actorOf } from "../authenticate.js";
import { listSchema } from "../list-envelope.js";
import { errorResponses } from "../openapi-errors.js";
import { contractParams, notFound } from "./contract-routes.js";

const ruleParams = contractParams.extend({ rule_id: z.string().min(1).max(64) });
const creditGrantList = listSchema(creditGrantSchema, "CreditGrantList");

/** What addPricingRule needs beyond its schema, whose fields are each optional (normalizeRule decides; docs/api.md, "Pricing programs and rules"). */
const RULE_REQUIREMENTS =
  "A pricing rule. `type` is required unless `metric` is given (the rule is then a usage rule). By type: `usage` needs `metric`, and `amount` (flat, the price per unit) or `rate` (percentage); `subscription`, `minimum` and `one_time` need `amount`, and take no metric, cap or counterparty scope. `model` is `percentage` when a `rate` is given, else `flat`. Usage rules may also be `graduated` or `volume` (`tiers`: `[{up_to, unit_amount, flat_amount?}]` in order, `up_to` inclusive and null on the last tier only) or `package` (`package_size`, a positive integer, and `amount` per started package); a `percentage` rule may add `fixed_fee`, `min_fee` and `max_fee` per event. `rate` is a fraction (0.0235 is 2.35 %): above 1 it needs `allow_rate_above_one: true`. A rule that does not add up is refused with 400 `invalid_pricing_rule`, `details` naming each field.";
/**
 * The document's request examples, each answered 2xx by a fresh company's sample contract on the day the service
 * started (test/http/openapi-examples.test.ts): its metrics (`domestic_wire`, `international_wire`) or new
 * ones a rule adds, and dates in the term a sample contract has from that day (a year).
 */
function pricingExamples(today: string) {
  const thisMonth = periodOf(new Date(`${today}T00:00:00Z`));
  const nextMonth = addDays(thisMonth.end, 1);
  return {
    rules: [
      { metric: "domestic_wire", amount: "18.00" },
      { metric: "card_volume", rate: "0.029", fixed_fee: "0.30", max_fee: "4000" },
      {
        metric: "api_calls",
        model: "graduated",
        tiers: [
          { up_to: 1000, unit_amount: "0.10" },
          { up_to: 10000, unit_amount: "0.08", flat_amount: "5" },
          { up_to: null, unit_amount: "0.05" },
        ],
      },
      { metric: "sms", model: "package", package_size: 1000, amount: "10" },
      { metric: "international_wire", amount: "25.00", effective_date: nextMonth },
    ],
    credits: [
      { amount: "500.00", type: "prepaid", expires_on: termEnd(today, 1) },
      { amount: "50", type: "promotional", metrics: ["domestic_wire"], priority: 10, name: "Launch credit" },
    ],
    preview: {
      rules: [
        { metric: "domestic_wire", amount: "18.00", monthly_cap: "4000" },
        { metric: "international_wire", amount: "25.00" },
        { metric: "card_volume", rate: "0.029", fixed_fee: "0.30" },
        { type: "minimum", amount: "1000.00" },
      ],
      billing_period_start: thisMonth.start,
      billing_period_end: thisMonth.end,
    },
  };
}

const invalidRule = { invalid_pricing_rule: "the fields do not make a valid rule; `details` name each problem" };

/** `clock`: the service's, which dates the document's examples (the day the routes are registered). */
export function contractPricingRoutes(services: Services, clock: Clock): FastifyPluginAsyncZod {
  return async (app) => {
    const examples = pricingExamples(toDateString(clock.now()));
    const addRuleBody = addPricingRuleBody.describe(RULE_REQUIREMENTS).meta({ examples: examples.rules });
    app.get(
      "/v1/billing/contracts/:ext_id/pricing",
      {
        schema: {
          operationId: "getContractPricing",
          tags: ["Pricing"],
          summary: "The active pricing program version",
          description:
            "The version of the contract's pricing program in force today, with its rules, and the dated changes scheduled after it. Scope `contracts:read`.",
          params: contractParams,
          response: { 200: pricingProgramSchema, ...errorResponses({ 404: notFound("contract") }) },
        },
      },
      async (request) => services.contracts.getPricing(actorOf(request), request.params.ext_id),
    );

    app.post(
      "/v1/billing/contracts/:ext_id/credits",
      {
        schema: {
          operationId: "createCreditGrant",
          tags: ["Credits"],
          summary: "Grant prepaid or promotional credit on a contract",
          description:
            "Usage burns the grant down as it is rated (in the same transaction), never below zero: each positive usage charge of a metric the grant pays for, on a day from `starts_on` to `expires_on`, is paid from the grants in priority order; the draft shows one `credit` line per grant, negative. A `prepaid` grant is billed as a one-time line on the contract's draft of this month. Every movement is a ledger entry (GET one grant). Scope `contracts:write`.",
          params: contractParams,
          body: createCreditGrantInput.meta({ examples: examples.credits }),
          response: {
            201: creditGrantSchema,
            ...errorResponses({
              400: {
                invalid_credit_grant: "amount, currency, dates or metrics do not make a grant; `details` name each",
              },
              404: notFound("contract"),
              409: { period_closed: "this month's and next month's invoices have left draft (a prepaid grant)" },
            }),
          },
        },
      },
      async (request, reply) =>
        reply.code(201).send(await services.credits.grant(actorOf(request), request.params.ext_id, request.body)),
    );

    app.get(
      "/v1/billing/contracts/:ext_id/credits",
      {
        schema: {
          operationId: "listCreditGrants",
          tags: ["Credits"],
          summary: "List a contract's credit grants, oldest first, with their balances",
          description:
            "Every credit grant of the contract, oldest first, each with what it granted, what is left and its days. Scope `contracts:read`.",
          params: contractParams,
          response: { 200: creditGrantList, ...errorResponses({ 404: notFound("contract") }) },
        },
      },
      async (request) => {
        const data = await services.credits.list(actorOf(request), request.params.ext_id);
        return { object: "list" as const, data, has_more: false, total_count: data.length };
      },
    );

    app.get(
      "/v1/billing/contracts/:ext_id/credits/:grant_id",
      {
        schema: {
          operationId: "getCreditGrant",
          tags: ["Credits"],
          summary: "Get a credit grant with its ledger",
          description:
            "The grant with its ledger: what it granted, what usage burned on which invoice, what expired or went back. Scope `contracts:read`.",
          params: contractParams.extend({ grant_id: z.string().min(1).max(64) }),
          response: { 200: creditGrantSchema, ...errorResponses({ 404: notFound("contract or credit grant") }) },
        },
      },
      async (request) => services.credits.get(actorOf(request), request.params.ext_id, request.params.grant_id),
    );

    app.post(
      "/v1/billing/contracts/:ext_id/pricing/preview",
      {
        schema: {
          operationId: "previewContractPricing",
          tags: ["Pricing"],
          summary: "Preview a pricing program against a month's stored usage",
          description:
            "Prices the month's stored usage events (voided ones left out), in the order they were stored, under `rules`, the whole program as it would be, and answers that invoice beside the month's invoice as it stands (`actual`: as issued, or a draft brought up to date as projection would), with the difference per line and in total. The preview is the invoice the same program would give the same events. Nothing is stored. Scope `contracts:read`.",
          params: contractParams,
          body: pricingPreviewInput.meta({ examples: [examples.preview] }),
          response: {
            200: pricingPreviewSchema,
            ...errorResponses({
              400: {
                ...invalidRule,
                invalid_billing_period: "not one calendar month of the months billed",
                outside_contract_term: "the month lies outside the contract's term",
                preview_too_large:
                  "the month holds more usage events than a preview prices (100,000); `details` name `billing_period_start`",
              },
              404: notFound("contract"),
              429: {
                too_many_previews:
                  "the company has a preview running already, or the service is pricing as many previews as it holds; try again after `Retry-After` seconds",
              },
            }),
          },
        },
      },
      async (request) =>
        services.usage.previewPricing(actorOf(request), request.params.ext_id, {
          rules: request.body.rules,
          periodStart: request.body.billing_period_start,
          periodEnd: request.body.billing_period_end,
          effectiveDate: request.body.effective_date ?? null,
        }),
    );

    app.post(
      "/v1/billing/contracts/:ext_id/pricing-rules",
      {
        schema: {
          operationId: "addPricingRule",
          tags: ["Pricing"],
          summary: "Add a pricing rule (new program version)",
          description:
            "Writes a new version of the contract's pricing program; earlier versions stay as they were. Without `effective_date`, the rule prices every event rated from now on (the version's effective_date is today, UTC). With `effective_date`, it prices events from that day on, in every version in force from then (scheduled ones included), and an open draft's events from that day are priced again in the same transaction; a day whose period's invoice has been issued answers 409 `period_closed`.",
          params: contractParams,
          body: addRuleBody,
          response: {
            201: pricingRuleResponseSchema,
            ...errorResponses({
              400: {
                ...invalidRule,
                outside_contract_term: "`effective_date` is outside the contract's term",
                too_many_rules: "the contract's program holds 100 rules already, the most a program may hold",
              },
              404: notFound("contract"),
              409: {
                rule_exists: "a rule with the supplied `id` is on the contract already",
                period_closed: "`effective_date` falls in or before a period whose invoice has been issued",
              },
            }),
          },
        },
      },
      async (request, reply) => {
        return reply
          .code(201)
          .send(await services.contracts.addRule(actorOf(request), request.params.ext_id, toRuleChange(request.body)));
      },
    );

    app.put(
      "/v1/billing/contracts/:ext_id/pricing-rules/:rule_id",
      {
        schema: {
          operationId: "updatePricingRule",
          tags: ["Pricing"],
          summary: "Update a pricing rule: fields merged, new program version",
          description:
            "The fields sent are merged into the rule; `null` clears an optional field; the id cannot change. The result must still be a valid rule (as for addPricingRule). `effective_date` as for addPricingRule: the fields are merged into the rule in every version in force from that day (without it, in every version), and open drafts are priced again from that day.",
          params: ruleParams,
          body: updatePricingRuleBody,
          response: {
            200: pricingRuleResponseSchema,
            ...errorResponses({
              400: {
                invalid_pricing_rule: "the merged rule is not valid, or `id` would change; `details` name each problem",
                outside_contract_term: "`effective_date` is outside the contract's term",
              },
              404: notFound("contract or rule"),
              409: {
                period_closed: "`effective_date` falls in or before a period whose invoice has been issued",
                usage_without_rule: "an open draft's event from `effective_date` on would have no rule",
              },
            }),
          },
        },
      },
      async (request) =>
        services.contracts.updateRule(
          actorOf(request),
          request.params.ext_id,
          request.params.rule_id,
          toRuleChange(request.body),
        ),
    );
  };
}
