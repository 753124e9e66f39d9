import type { Delivery } from "../../domain/webhooks/webhook-schemas.js";
import type { SafeHtml } from "./html.js";
import { badge } from "./layout.js";

// How pages say the domain's values in words, where the domain has no wording of its own (a rule's price
// has: domain/contracts/rule-price-wording.ts, the words the agreement PDF prints too).

/** A delivery's status; a pending delivery that has been tried already is waiting for its retry. */
export function deliveryStatusBadge(delivery: Pick<Delivery, "status" | "attempts">): SafeHtml {
  if (delivery.status === "succeeded") return badge("succeeded", "ok");
  if (delivery.status === "failed") return badge("failed", "bad");
  return delivery.attempts > 0 ? badge("retrying", "warn") : badge("pending", "warn");
}

/** "March 2026" for a period starting 2026-03-01 (the month comes from the service's clock, not the browser's). */
export const monthName = (periodStart: string): string =>
  new Date(`${periodStart}T00:00:00Z`).toLocaleString("en-US", { month: "long", year: "numeric", timeZone: "UTC" });
