/**
 * Token buckets, one per key (an API key's id): `capacity` requests at once, refilled at `perSecond`.
 * In memory, per process: N processes behind a load balancer allow up to N times the rate.
 */
export interface RateLimit {
  capacity: number;
  perSecond: number;
}

/** "100/s", "6000/m", "off". */
export function parseRateLimit(text: string): RateLimit | null {
  if (/^(off|0|none|false)$/i.test(text.trim())) return null;
  const match = /^\s*(\d+)\s*\/\s*(s|m|h)\s*$/.exec(text);
  if (!match) throw new Error(`not a rate: '${text}' (use e.g. 100/s, 6000/m or off)`);
  const count = Number(match[1]);
  const seconds = { s: 1, m: 60, h: 3600 }[match[2] as "s" | "m" | "h"];
  return { capacity: count, perSecond: count / seconds };
}

const MAX_KEYS = 100_000;

export function createRateLimiter(limit: RateLimit, now: () => number = () => Date.now()) {
  const buckets = new Map<string, { tokens: number; at: number }>();
  return {
    /** Takes one token for `key`; when none is left, says in how many ms the next one arrives. */
    take(key: string): { allowed: true } | { allowed: false; retryAfterMs: number } {
      const t = now();
      let bucket = buckets.get(key);
      if (!bucket) {
        if (buckets.size >= MAX_KEYS) buckets.delete(buckets.keys().next().value!);
        bucket = { tokens: limit.capacity, at: t };
        buckets.set(key, bucket);
      } else {
        bucket.tokens = Math.min(limit.capacity, bucket.tokens + ((t - bucket.at) / 1000) * limit.perSecond);
        bucket.at = t;
      }
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { allowed: true };
      }
      return { allowed: false, retryAfterMs: Math.ceil(((1 - bucket.tokens) / limit.perSecond) * 1000) };
    },
  };
}

export type RateLimiter = ReturnType<typeof createRateLimiter>;
