import Big from "big.js";
import type { PresentedRule } from "../../domain/contracts/pricing-rule.js";
import type { Delivery } from "../../domain/webhooks/webhook-schemas.js";
import type { SafeHtml } from "./html.js";
import { badge, decimal, money } from "./layout.js";

// How pages say the domain's values in words. One place, so the contract page and the usage event page
// cannot drift apart on how the same rule or delivery reads.

/** A rate (a fraction) as a percentage, shifted in decimal so 0.029 reads "2.9%" and not 2.9000000000000004. */
export function percent(rate: number | string): string {
  try {
    return `${decimal(new Big(rate).times(100).toFixed())}%`;
  } catch {
    return String(rate);
  }
}

/** A per-unit price: money, so it reads like the rule that set it ("20.00 USD per unit"). */
export const perUnit = (amount: number | string, currency: string | undefined) => `${money(amount, currency)} per unit`;

/** What a pricing rule charges: a share of the event's value, a price per unit, or a flat amount. */
export function rulePrice(rule: PresentedRule): string {
  if (rule.model === "percentage") return rule.rate === null ? "—" : `${percent(rule.rate)} of the event's value`;
  if (rule.amount === null) return "—";
  return rule.type === "usage" ? perUnit(rule.amount, rule.currency) : money(rule.amount, rule.currency);
}

/** A delivery's status; a pending delivery that has been tried already is waiting for its retry. */
export function deliveryStatusBadge(delivery: Pick<Delivery, "status" | "attempts">): SafeHtml {
  if (delivery.status === "succeeded") return badge("succeeded", "ok");
  if (delivery.status === "failed") return badge("failed", "bad");
  return delivery.attempts > 0 ? badge("retrying", "warn") : badge("pending", "warn");
}
