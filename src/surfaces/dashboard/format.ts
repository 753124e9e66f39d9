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
