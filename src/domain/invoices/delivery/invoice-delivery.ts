import { createHash, randomBytes } from "node:crypto";
import type { CompanyScope } from "../../../db/company-scope.js";
import * as repo from "./invoice-message-repository.js";

/** A hosted page's token: 32 random bytes, base64url (43 characters). */
export const HOSTED_TOKEN = /^[A-Za-z0-9_-]{43}$/;

export const hostedTokenSha256 = (token: string): Buffer => createHash("sha256").update(token).digest();

/** A new hosted link: its URL (kept, to be shown again) and the SHA-256 of its token (what a visit is looked up by). */
export function newHostedLink(publicUrl: string): { url: string; sha256: Buffer } {
  const token = randomBytes(32).toString("base64url");
  return { url: `${publicUrl}/i/${token}`, sha256: hostedTokenSha256(token) };
}

/**
 * What issuing an invoice starts, in the transaction that issues it (finalize-invoice.ts), so that both commit
 * or neither: its hosted page's link, and, for a customer whose invoices are delivered by email, the message
 * that sends it (the mail worker sends it after the commit; the request never waits on SMTP). Returns the
 * columns it wrote on the invoice.
 */
export async function startDelivery(
  tx: CompanyScope,
  issued: { number: string; at: Date; publicUrl: string },
): Promise<{ hosted_url: string }> {
  const link = newHostedLink(issued.publicUrl);
  await repo.setHostedLink(tx, issued.number, link);
  await repo.queueMessage(tx, { number: issued.number, kind: "issued", at: issued.at, onlyIfEmailDelivery: true });
  return { hosted_url: link.url };
}
