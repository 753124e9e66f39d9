import { createHmac, randomBytes } from "node:crypto";

const USER_AGENT = "Service-Webhooks/1.0";

/** A new signing secret: `whsec_` and 32 random bytes in base64, the Standard Webhooks form. */
export const generateSigningSecret = (): string => `whsec_${randomBytes(32).toString("base64")}`;

/**
 * The headers of one delivery attempt (docs/webhooks.md, "What arrives"), and the Standard Webhooks headers beside them so
 * that receivers can use either verifier. Both are keyed with the endpoint's one secret:
 * - `Service-Signature: t=<unix s>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed with the secret as text
 *   (what Stripe's verifier does with the same scheme);
 * - `webhook-signature: v1,<base64 HMAC-SHA256 of "<id>.<t>.<body>">`, keyed with the bytes after `whsec_`.
 */
export function deliveryHeaders(input: {
  secret: string;
  eventId: string;
  eventType: string;
  body: string;
  timestamp: number;
}): Record<string, string> {
  const { secret, eventId, eventType, body, timestamp } = input;
  const v1 = createHmac("sha256", secret).update(`${timestamp}.${body}`, "utf8").digest("hex");
  const standardKey = Buffer.from(secret.startsWith("whsec_") ? secret.slice("whsec_".length) : secret, "base64");
  const standard = createHmac("sha256", standardKey).update(`${eventId}.${timestamp}.${body}`, "utf8").digest("base64");
  return {
    "content-type": "application/json",
    "user-agent": USER_AGENT,
    "service-signature": `t=${timestamp},v1=${v1}`,
    "service-event-id": eventId,
    "service-event-type": eventType,
    "webhook-id": eventId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": `v1,${standard}`,
  };
}
