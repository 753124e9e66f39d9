import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { addressKey, createFailureThrottle, type AuthSurface } from "./failure-throttle.js";

function throttle(limit: number, options: { maxAddresses?: number } = {}) {
  let now = 1_000_000;
  const refused: AuthSurface[] = [];
  const t = createFailureThrottle({ limit, now: () => now, onRefused: (surface) => refused.push(surface), ...options });
  return {
    t,
    refused,
    at: (ms: number) => {
      now = 1_000_000 + ms;
    },
    fail: (address: string, times: number) => {
      for (let i = 0; i < times; i++) t.countFailure(address);
    },
  };
}

describe("failure throttle", () => {
  it("allows `limit` failures in a window, then refuses with the seconds left until the window ends", () => {
    const { t, at, fail, refused } = throttle(3);
    fail("10.0.0.1", 2);
    assert.equal(t.refusal("10.0.0.1", "api"), undefined);
    fail("10.0.0.1", 1);
    assert.equal(t.refusal("10.0.0.1", "api"), 60);
    at(400);
    assert.equal(t.refusal("10.0.0.1", "admin"), 60); // 59.6 s, rounded up
    at(59_001);
    assert.equal(t.refusal("10.0.0.1", "dashboard"), 1);
    at(59_999);
    assert.equal(t.refusal("10.0.0.1", "oauth"), 1, "never Retry-After: 0");
    assert.deepEqual(refused, ["api", "admin", "dashboard", "oauth"]);
  });

  it("opens the window at the first failure and forgets it once it has run out", () => {
    const { t, at, fail } = throttle(2);
    at(10_000);
    fail("10.0.0.1", 1);
    at(50_000);
    fail("10.0.0.1", 1);
    assert.equal(t.refusal("10.0.0.1", "api"), 20, "the window opened at 10 s and ends at 70 s");
    at(69_999);
    assert.equal(t.refusal("10.0.0.1", "api"), 1);
    at(70_000);
    assert.equal(t.refusal("10.0.0.1", "api"), undefined);
    fail("10.0.0.1", 1);
    assert.equal(t.refusal("10.0.0.1", "api"), undefined, "a new window holds one failure");
    fail("10.0.0.1", 1);
    assert.equal(t.refusal("10.0.0.1", "api"), 60);
  });

  it("keeps one count per address, and refuses nothing to an address that never failed", () => {
    const { t, fail, refused } = throttle(1);
    fail("10.0.0.1", 5);
    assert.equal(t.refusal("10.0.0.1", "api"), 60);
    assert.equal(t.refusal("10.0.0.2", "api"), undefined);
    assert.equal(t.refusal("2001:db8::1", "api"), undefined);
    assert.deepEqual(refused, ["api"]);
  });

  it("counts an IPv6 client by its /64 network, and an IPv4-mapped address as the IPv4 address", () => {
    const { t, fail } = throttle(2);
    fail("2001:db8:1:2::1", 1);
    fail("2001:db8:1:2:ffff:ffff:ffff:ffff", 1);
    assert.equal(t.refusal("2001:0db8:0001:0002::abcd", "api"), 60);
    assert.equal(t.refusal("2001:db8:1:3::1", "api"), undefined, "the next /64 is another client");
    fail("::ffff:192.0.2.7", 2);
    assert.equal(t.refusal("192.0.2.7", "api"), 60);
    assert.equal(addressKey("::ffff:192.0.2.7"), "192.0.2.7");
    assert.equal(addressKey("2001:db8::1"), "2001:db8:0:0::/64");
    assert.equal(addressKey("not an address"), "not an address");
  });

  it("treats a window opened in the future (a clock set back) as closed", () => {
    const { t, at, fail } = throttle(1);
    at(120_000);
    fail("10.0.0.1", 1);
    at(0);
    assert.equal(t.refusal("10.0.0.1", "api"), undefined);
  });

  it("remembers at most `maxAddresses` open windows, forgetting expired ones first, then the oldest", () => {
    const { t, at, fail } = throttle(1, { maxAddresses: 2 });
    fail("10.0.0.1", 1);
    at(1_000);
    fail("10.0.0.2", 1);
    at(2_000);
    fail("10.0.0.3", 1);
    assert.equal(t.refusal("10.0.0.1", "api"), undefined, "the oldest was forgotten");
    assert.equal(t.refusal("10.0.0.2", "api"), 59);
    assert.equal(t.refusal("10.0.0.3", "api"), 60);
    at(61_500);
    fail("10.0.0.4", 1);
    assert.equal(t.refusal("10.0.0.2", "api"), undefined, "expired");
    assert.equal(t.refusal("10.0.0.3", "api"), 1);
    assert.equal(t.refusal("10.0.0.4", "api"), 60);
  });
});
