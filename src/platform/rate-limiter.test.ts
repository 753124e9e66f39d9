import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createRateLimiter, parseRateLimit } from "./rate-limiter.js";

describe("rate limiter", () => {
  it("lets a burst of `capacity` through, then refuses with the wait until the next token", () => {
    let now = 0;
    const limiter = createRateLimiter({ capacity: 3, perSecond: 1 }, () => now);
    assert.deepEqual(
      [limiter.take("k"), limiter.take("k"), limiter.take("k")].map((r) => r.allowed),
      [true, true, true],
    );
    assert.deepEqual(limiter.take("k"), { allowed: false, retryAfterMs: 1000 });
    now = 400;
    assert.deepEqual(limiter.take("k"), { allowed: false, retryAfterMs: 600 });
    now = 1000;
    assert.equal(limiter.take("k").allowed, true);
  });

  it("keeps one bucket per key", () => {
    const limiter = createRateLimiter({ capacity: 1, perSecond: 1 }, () => 0);
    assert.equal(limiter.take("a").allowed, true);
    assert.equal(limiter.take("a").allowed, false);
    assert.equal(limiter.take("b").allowed, true);
  });

  it("never refills beyond its capacity", () => {
    let now = 0;
    const limiter = createRateLimiter({ capacity: 2, perSecond: 10 }, () => now);
    now = 60_000;
    assert.equal(limiter.take("k").allowed, true);
    assert.equal(limiter.take("k").allowed, true);
    assert.equal(limiter.take("k").allowed, false);
  });

  it("reads rates per second, minute and hour, and off", () => {
    assert.deepEqual(parseRateLimit("100/s"), { capacity: 100, perSecond: 100 });
    assert.deepEqual(parseRateLimit("600/m"), { capacity: 600, perSecond: 10 });
    assert.deepEqual(parseRateLimit("3600/h"), { capacity: 3600, perSecond: 1 });
    assert.equal(parseRateLimit("off"), null);
    assert.throws(() => parseRateLimit("fast"));
  });
});
