import { lookup } from "node:dns/promises";
import { checkEndpointUrl, isPublicAddress } from "../../platform/address-policy.js";
import { ValidationError } from "../kernel/errors.js";

/**
 * What lifts the refusal of a local or private URL, said where it is refused: in the API's error and beside the
 * dashboard's URL field (webhook-page-parts.ts), so that a developer with a receiver on their own machine learns the
 * way round it, and that it is not for production.
 */
export const ALLOW_PRIVATE_HINT =
  "For local development, whoever runs this billing service can allow http:// and private addresses by starting it with BILLING_WEBHOOK_ALLOW_PRIVATE=true (never in production: it lets the service send requests into its own network).";

/** Whether a refused URL's error names BILLING_WEBHOOK_ALLOW_PRIVATE: the URL was refused for being local only. */
export function refusedAsLocal(error: ValidationError): boolean {
  return error.code === "invalid_url" && error.message.endsWith(ALLOW_PRIVATE_HINT);
}

/** A refused endpoint URL: `message` for the API's error, `reason` beside the field; a local one says how to allow it. */
function invalidUrl(message: string, reason: string, local: boolean): ValidationError {
  return new ValidationError(local ? `${message}. ${ALLOW_PRIVATE_HINT}` : message, "invalid_url", [
    { path: "url", message: reason },
  ]);
}

/**
 * An endpoint's URL as it is saved, or 400 `invalid_url` (docs/decisions.md, "Webhooks"): https only, and every
 * address the host resolves to is public; checked again at each delivery.
 */
export async function checkUrl(text: string, { allowPrivate }: { allowPrivate: boolean }): Promise<string> {
  const verdict = checkEndpointUrl(text, { allowPrivate });
  if (!verdict.ok) throw invalidUrl(`url ${verdict.reason}`, verdict.reason, verdict.local);
  if (!allowPrivate) {
    const host = verdict.url.hostname.replace(/^\[|\]$/g, "");
    let addresses: { address: string }[];
    try {
      addresses = await lookup(host, { all: true, verbatim: true });
    } catch {
      throw new ValidationError(`url host ${host} does not resolve`, "invalid_url", [
        { path: "url", message: "host does not resolve" },
      ]);
    }
    const refused = addresses.find((a) => !isPublicAddress(a.address));
    if (addresses.length === 0 || refused) {
      throw invalidUrl(
        `url host ${host} resolves to a non-public address`,
        "must resolve to public addresses only",
        addresses.length > 0,
      );
    }
  }
  return verdict.url.toString();
}
