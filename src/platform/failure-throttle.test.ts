import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { counterKeys, createFailureThrottle, IPV4_NETWORK_FACTOR, type AuthSurface } from "./failure-throttle.js";

function throttle(limit: number, options: { maxCounters?: number } = {}) {
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
    fail("10.0.0.1", IPV4_NETWORK_FACTOR - 1); // over the address's 1, under its network's 4
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
  });

  const keyCases: Array<{ address: string; keys: Array<[string, number]> }> = [
    {
      address: "192.0.2.7",
      keys: [
        ["192.0.2.7", 1],
        ["192.0.2.0/24", IPV4_NETWORK_FACTOR],
      ],
    },
    {
      address: "::ffff:192.0.2.7",
      keys: [
        ["192.0.2.7", 1],
        ["192.0.2.0/24", IPV4_NETWORK_FACTOR],
      ],
    },
    {
      address: "::ffff:c000:207",
      keys: [
        ["192.0.2.7", 1],
        ["192.0.2.0/24", IPV4_NETWORK_FACTOR],
      ],
    },
    {
      address: "10.1.2.255",
      keys: [
        ["10.1.2.255", 1],
        ["10.1.2.0/24", IPV4_NETWORK_FACTOR],
      ],
    },
    { address: "2001:db8::1", keys: [["2001:db8:0:0::/64", 1]] },
    { address: "2001:0DB8:0001:0002:ffff::1", keys: [["2001:db8:1:2::/64", 1]] },
    { address: "not an address", keys: [["not an address", 1]] },
    { address: "", keys: [["", 1]] },
  ];
  for (const { address, keys } of keyCases) {
    it(`counts failures of '${address}' against ${keys.map(([key, factor]) => `${key} (${factor}×)`).join(" and ")}`, () => {
      assert.deepEqual(
        counterKeys(address),
        keys.map(([key, factor]) => ({ key, factor })),
      );
    });
  }

  it(`counts an IPv4 address's failures against its /24 network too, whose budget is ${IPV4_NETWORK_FACTOR} times an address's`, () => {
    const { t, at, fail, refused } = throttle(3);
    const budget = 3 * IPV4_NETWORK_FACTOR;
    // 12 addresses of one /24, each 1 failure below its own limit... until the network's 12 are spent.
    for (let i = 1; i <= budget / 2; i++) {
      at(i * 1_000);
      fail(`203.0.113.${i}`, 2);
      const spent = i * 2;
      assert.equal(
        t.refusal(`203.0.113.${i}`, "api"),
        spent < budget ? undefined : 55,
        `after ${spent} failures of the network`,
      );
    }
    assert.equal(
      t.refusal("203.0.113.200", "api"),
      55,
      "an address that never failed, in the spent /24: the network's window opened at 1 s, it is 6 s",
    );
    assert.equal(t.refusal("203.0.114.1", "api"), undefined, "the next /24 is another network");
    assert.equal(t.refusal("::ffff:203.0.113.201", "api"), 55, "written IPv4-mapped, the same network");
    at(60_999);
    assert.equal(t.refusal("203.0.113.200", "api"), 1);
    at(61_000);
    assert.equal(t.refusal("203.0.113.200", "api"), undefined, "the network's minute is over");
    assert.equal(
      t.refusal("203.0.113.6", "api"),
      undefined,
      "and the addresses' own windows (opened at 6 s) hold 2 of 3",
    );
    assert.equal(refused.length, 4);
  });

  it("waits for the later of the two windows when an address and its network are both spent", () => {
    const { t, at, fail } = throttle(2);
    fail("198.51.100.1", 6); // the network holds 6 of 8, the address is over its 2
    at(30_000);
    fail("198.51.100.2", 2); // network: 8 of 8, window opened at 0; address .2: 2 of 2, window opened at 30 s
    assert.equal(t.refusal("198.51.100.2", "api"), 60, "its own window ends at 90 s, the network's at 60 s");
    assert.equal(t.refusal("198.51.100.3", "api"), 30, "only the network's");
    at(60_000);
    assert.equal(t.refusal("198.51.100.3", "api"), undefined);
    assert.equal(t.refusal("198.51.100.2", "api"), 30);
  });

  it("does not give IPv6 networks a second counter: a /64 is one client", () => {
    const { t, fail } = throttle(2);
    for (let i = 1; i <= 20; i++) fail(`2001:db8:${i.toString(16)}::1`, 1);
    assert.equal(t.refusal("2001:db8:21::1", "api"), undefined, "twenty /64 networks, each with one failure");
  });

  it("treats a window opened in the future (a clock set back) as closed", () => {
    const { t, at, fail } = throttle(1);
    at(120_000);
    fail("10.0.0.1", 1);
    at(0);
    assert.equal(t.refusal("10.0.0.1", "api"), undefined);
  });

  it("remembers at most `maxCounters` open windows, forgetting expired ones first, then the oldest", () => {
    // IPv6 addresses: one counter each.
    const { t, at, fail } = throttle(1, { maxCounters: 2 });
    fail("2001:db8:1::1", 1);
    at(1_000);
    fail("2001:db8:2::1", 1);
    at(2_000);
    fail("2001:db8:3::1", 1);
    assert.equal(t.refusal("2001:db8:1::1", "api"), undefined, "the oldest was forgotten");
    assert.equal(t.refusal("2001:db8:2::1", "api"), 59);
    assert.equal(t.refusal("2001:db8:3::1", "api"), 60);
    at(61_500);
    fail("2001:db8:4::1", 1);
    assert.equal(t.refusal("2001:db8:2::1", "api"), undefined, "expired");
    assert.equal(t.refusal("2001:db8:3::1", "api"), 1);
    assert.equal(t.refusal("2001:db8:4::1", "api"), 60);
  });

  it("counts an IPv4 failure's two counters against `maxCounters`", () => {
    const { t, at, fail } = throttle(1, { maxCounters: 4 });
    fail("10.0.1.1", 1);
    at(1_000);
    fail("10.0.2.1", 1);
    at(2_000);
    fail("10.0.3.1", 1);
    assert.equal(t.refusal("10.0.1.1", "api"), undefined, "the oldest address and its network were forgotten");
    assert.equal(t.refusal("10.0.2.1", "api"), 59);
    assert.equal(t.refusal("10.0.3.1", "api"), 60);
  });
});
