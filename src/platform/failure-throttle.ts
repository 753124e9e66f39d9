import ipaddr from "ipaddr.js";

/**
 * Failed authentications per client address (BILLING_AUTH_FAILURES): an address may fail `limit` times in
 * a window of `windowMs` (one minute); further attempts are answered 429 until that window ends. One counter
 * per address, shared by every surface (API keys, the admin token, dashboard and OAuth passwords), so a
 * guesser cannot spend a budget on each. A fixed window opens at an address's first failure; only failures
 * take memory. In memory, per process: N processes behind a load balancer allow up to N times the budget.
 */
export type AuthSurface = "api" | "admin" | "dashboard" | "oauth";

export interface FailureThrottleOptions {
  /** Failures allowed per address and window. */
  limit: number;
  windowMs?: number;
  /** Milliseconds since the epoch; tests pass a clock they move. */
  now?: () => number;
  /** Told of every refusal (the metric billing_auth_throttled_total). */
  onRefused?: (surface: AuthSurface) => void;
  /** Addresses with a window open that are remembered at most; beyond it the oldest is forgotten. */
  maxAddresses?: number;
}

export interface FailureThrottle {
  /**
   * Seconds to wait (Retry-After) when `address` has already used its budget of failures, else undefined.
   * Callers ask before counting a failure, or before checking a password (argon2 is slow), never about a
   * credential that proved valid.
   */
  refusal(address: string, surface: AuthSurface): number | undefined;
  /** Counts one failed authentication of `address`. */
  countFailure(address: string): void;
}

// Bounded memory, like the rate limiter's MAX_KEYS.
const MAX_ADDRESSES = 100_000;

/**
 * The counter's key for a client address: IPv4 as is (also when written IPv4-mapped, ::ffff:a.b.c.d), and
 * IPv6 by its /64 network, since one client commonly holds a whole /64 and could otherwise rotate through it.
 */
export function addressKey(address: string): string {
  try {
    const parsed = ipaddr.process(address);
    if (parsed.kind() === "ipv4") return parsed.toString();
    const parts = (parsed as ipaddr.IPv6).parts.slice(0, 4).map((part) => part.toString(16));
    return `${parts.join(":")}::/64`;
  } catch {
    return address;
  }
}

export function createFailureThrottle(options: FailureThrottleOptions): FailureThrottle {
  const { limit, windowMs = 60_000, now = () => Date.now(), onRefused, maxAddresses = MAX_ADDRESSES } = options;
  // Insertion order is window-opening order (a window is re-inserted when it opens again), so expired
  // windows are always at the front.
  const windows = new Map<string, { opened: number; failures: number }>();
  // A clock set back (tests do) must not keep a window open for longer than its length.
  const open = (window: { opened: number } | undefined, t: number) => !!window && t >= window.opened && t < window.opened + windowMs;

  return {
    refusal(address, surface) {
      const t = now();
      const window = windows.get(addressKey(address));
      if (!window || !open(window, t) || window.failures < limit) return undefined;
      onRefused?.(surface);
      return Math.max(1, Math.ceil((window.opened + windowMs - t) / 1000));
    },

    countFailure(address) {
      const t = now();
      const key = addressKey(address);
      const window = windows.get(key);
      if (window && open(window, t)) {
        window.failures += 1;
        return;
      }
      windows.delete(key);
      for (const [oldKey, old] of windows) {
        if (open(old, t) && windows.size < maxAddresses) break;
        windows.delete(oldKey);
      }
      windows.set(key, { opened: t, failures: 1 });
    },
  };
}
