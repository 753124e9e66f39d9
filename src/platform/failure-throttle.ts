import ipaddr from "ipaddr.js";

/**
 * Failed authentications per client address (BILLING_AUTH_FAILURES): an address may fail `limit` times in
 * a window of `windowMs` (one minute); further attempts are answered 429 until that window ends. One counter
 * per address, shared by every surface (API keys, the admin token, dashboard and OAuth passwords), so a
 * guesser cannot spend a budget on each. An IPv4 address also counts against its /24 network, whose budget is
 * IPV4_NETWORK_FACTOR times the address's: whoever holds many addresses of one network (a cloud range, a
 * botnet in one subnet) cannot multiply the budget by rotating through them, while an office of a few
 * addresses behind one network keeps room. IPv6 is counted by its /64 alone (counterKeys). A fixed window
 * opens at a counter's first failure; only failures take memory. In memory, per process: N processes behind
 * a load balancer allow up to N times the budget.
 */
export type AuthSurface = "api" | "admin" | "dashboard" | "oauth";

export interface FailureThrottleOptions {
  /** Failures allowed per address and window (an IPv4 /24 network: IPV4_NETWORK_FACTOR times as many). */
  limit: number;
  windowMs?: number;
  /** Milliseconds since the epoch; tests pass a clock they move. */
  now?: () => number;
  /** Told of every refusal (the metric billing_auth_throttled_total). */
  onRefused?: (surface: AuthSurface) => void;
  /** Counters (addresses and networks) with a window open that are remembered at most; beyond it the oldest is forgotten. */
  maxCounters?: number;
}

export interface FailureThrottle {
  /**
   * Seconds to wait (Retry-After) when `address`, or its IPv4 /24 network, has already used its budget of
   * failures, else undefined.
   * Callers ask before counting a failure, or before checking a password (argon2 is slow), never about a
   * credential that proved valid.
   */
  refusal(address: string, surface: AuthSurface): number | undefined;
  /** Counts one failed authentication of `address` (and of its IPv4 /24 network). */
  countFailure(address: string): void;
}

// Bounded memory, like the rate limiter's MAX_KEYS.
const MAX_COUNTERS = 100_000;

/** An IPv4 /24 network may fail this many times the per-address limit (240 a minute by default). */
export const IPV4_NETWORK_FACTOR = 4;

/** One counter a failure is added to: its key, and how many times the per-address limit it allows. */
export interface CounterKey {
  key: string;
  factor: number;
}

/**
 * The counters a client address's failures go to. IPv4 (also when written IPv4-mapped, ::ffff:a.b.c.d): the
 * address, and its /24 network with IPV4_NETWORK_FACTOR times the budget. IPv6: its /64 network only, since one
 * client commonly holds a whole /64 and could otherwise rotate through it. Anything else: the text as is.
 */
export function counterKeys(address: string): CounterKey[] {
  let parsed: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    parsed = ipaddr.process(address);
  } catch {
    return [{ key: address, factor: 1 }];
  }
  if (parsed.kind() === "ipv4") {
    const octets = (parsed as ipaddr.IPv4).octets;
    return [
      { key: parsed.toString(), factor: 1 },
      { key: `${octets.slice(0, 3).join(".")}.0/24`, factor: IPV4_NETWORK_FACTOR },
    ];
  }
  const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
  return [{ key: `${parts.join(":")}::/64`, factor: 1 }];
}

export function createFailureThrottle(options: FailureThrottleOptions): FailureThrottle {
  const { limit, windowMs = 60_000, now = () => Date.now(), onRefused, maxCounters = MAX_COUNTERS } = options;
  // Insertion order is window-opening order (a window is re-inserted when it opens again), so expired
  // windows are always at the front.
  const windows = new Map<string, { opened: number; failures: number }>();
  // A clock set back (tests do) must not keep a window open for longer than its length.
  const open = (window: { opened: number } | undefined, t: number) =>
    !!window && t >= window.opened && t < window.opened + windowMs;

  return {
    refusal(address, surface) {
      const t = now();
      // The longest wait of the counters over their budget: the address may try again once all of them allow it.
      let wait: number | undefined;
      for (const { key, factor } of counterKeys(address)) {
        const window = windows.get(key);
        if (!window || !open(window, t) || window.failures < limit * factor) continue;
        wait = Math.max(wait ?? 0, Math.max(1, Math.ceil((window.opened + windowMs - t) / 1000)));
      }
      if (wait !== undefined) onRefused?.(surface);
      return wait;
    },

    countFailure(address) {
      const t = now();
      for (const { key } of counterKeys(address)) {
        const window = windows.get(key);
        if (window && open(window, t)) {
          window.failures += 1;
          continue;
        }
        windows.delete(key);
        for (const [oldKey, old] of windows) {
          if (open(old, t) && windows.size < maxCounters) break;
          windows.delete(oldKey);
        }
        windows.set(key, { opened: t, failures: 1 });
      }
    },
  };
}
