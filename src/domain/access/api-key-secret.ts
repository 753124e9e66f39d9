import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

const KEY_PREFIX = "sk_live_";

/** A new API key: 32 random bytes, shown once. */
export const generateApiKey = (): string => KEY_PREFIX + randomBytes(32).toString("base64url");

/**
 * Keys carry 256 bits of entropy, so a fast hash is enough (no password stretching needed) and lets the
 * key be found by an index lookup on its hash: the key itself is never stored nor compared as text.
 */
export const hashApiKey = (key: string): Buffer => createHash("sha256").update(key, "utf8").digest();

/** What the key shows for recognition in listings: enough to tell keys apart, far too little to guess. */
export const displayPrefix = (key: string): string => key.slice(0, Math.min(12, Math.floor(key.length / 3)));

/** Constant-time equality of two secrets of any length (hashes first, so lengths do not leak). */
export function secretsEqual(a: string, b: string): boolean {
  return timingSafeEqual(hashApiKey(a), hashApiKey(b));
}
