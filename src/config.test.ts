import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { ConfigError, loadConfig } from "./config.js";

const base = { BILLING_DATA_DIR: "memory://" };

describe("configuration: request timeout, ingestion and the embedded database", () => {
  it("gives a client 30 s to send a request unless BILLING_REQUEST_TIMEOUT says otherwise", () => {
    assert.equal(loadConfig(base).requestTimeoutMs, 30_000);
    assert.equal(loadConfig({ ...base, BILLING_REQUEST_TIMEOUT: "5s" }).requestTimeoutMs, 5_000);
    assert.throws(() => loadConfig({ ...base, BILLING_REQUEST_TIMEOUT: "soon" }), ConfigError);
  });

  it("writes usage in 2 lanes per company with one call in flight each unless BILLING_INGEST_LANES / _CALLS_IN_FLIGHT say otherwise (1 to 64)", () => {
    assert.deepEqual(loadConfig(base).ingest, { lanes: 2, callsInFlight: 1 });
    assert.deepEqual(loadConfig({ ...base, BILLING_INGEST_LANES: "1", BILLING_INGEST_CALLS_IN_FLIGHT: "3" }).ingest, {
      lanes: 1,
      callsInFlight: 3,
    });
    assert.deepEqual(loadConfig({ ...base, BILLING_INGEST_LANES: "", BILLING_INGEST_CALLS_IN_FLIGHT: "" }).ingest, {
      lanes: 2,
      callsInFlight: 1,
    });
    for (const name of ["BILLING_INGEST_LANES", "BILLING_INGEST_CALLS_IN_FLIGHT"]) {
      for (const bad of ["0", "-1", "1.5", "65", "two"]) {
        assert.throws(
          () => loadConfig({ ...base, [name]: bad }),
          (error: Error) => error instanceof ConfigError && error.message.includes(name),
          `${name}=${bad}`,
        );
      }
    }
  });

  it("runs the embedded database on its own thread with 16 MB of shared buffers unless told otherwise", () => {
    const storage = loadConfig(base).storage;
    assert.deepEqual(storage, { kind: "pglite", dataDir: "memory://", runOn: "thread" });
    assert.deepEqual(
      loadConfig({ ...base, BILLING_PGLITE_THREAD: "off", BILLING_PGLITE_SHARED_BUFFERS: "32MB" }).storage,
      {
        kind: "pglite",
        dataDir: "memory://",
        runOn: "in-process",
        sharedBuffers: "32MB",
      },
    );
  });
});

describe("configuration: the admin token and the failed-authentication throttle", () => {
  it("refuses an admin token shorter than 32 characters, naming the variable and the minimum; empty means unset", () => {
    const short = "a".repeat(31);
    assert.throws(
      () => loadConfig({ ...base, BILLING_ADMIN_TOKEN: short }),
      (error: Error) =>
        error instanceof ConfigError &&
        /^BILLING_ADMIN_TOKEN must be at least 32 characters long/.test(error.message) &&
        !error.message.includes(short),
    );
    assert.equal(loadConfig({ ...base, BILLING_ADMIN_TOKEN: "" }).adminToken, undefined);
    assert.equal(loadConfig(base).adminToken, undefined);
  });

  // 16 different characters: "0123456789abcdef".
  const sixteen = "0123456789abcdef";
  const adminTokens: Array<{ name: string; token: string; refusal?: RegExp }> = [
    {
      name: "32 identical characters",
      token: "x".repeat(32),
      refusal: /^BILLING_ADMIN_TOKEN must have at least 16 different characters \(it has 1\)/,
    },
    {
      name: "32 spaces",
      token: " ".repeat(32),
      refusal: /^BILLING_ADMIN_TOKEN must not contain spaces or other whitespace/,
    },
    {
      name: "a strong token with one space inside",
      token: `${sixteen}${sixteen.slice(0, 8)} ${sixteen.slice(8)}`,
      refusal: /must not contain spaces/,
    },
    {
      name: "a strong token with a trailing newline (pasted from a file)",
      token: `${sixteen}${sixteen}\n`,
      refusal: /must not contain spaces/,
    },
    { name: "a tab", token: `${sixteen}\t${sixteen}`, refusal: /must not contain spaces/ },
    { name: "a no-break space", token: `${sixteen}\u00a0${sixteen}`, refusal: /must not contain spaces/ },
    { name: "a short token with a space: whitespace is named first", token: "a b", refusal: /must not contain spaces/ },
    {
      name: "two characters alternating",
      token: "xy".repeat(20),
      refusal: /at least 16 different characters \(it has 2\)/,
    },
    { name: "16 different characters, 32 long", token: sixteen.repeat(2) },
    // A hex token draws from 16 characters only: `openssl rand -hex 32` misses one of them one time in four.
    { name: "64 hex digits missing six of the 16", token: "0123456789".repeat(6) + "0123" },
    {
      name: "32 hex digits missing two of the 16 (randomBytes(16) as hex)",
      token: "0123456789abcd".repeat(3).slice(0, 32),
    },
    {
      name: "64 hex digits with only 9 of the 16",
      token: "012345678".repeat(7) + "0",
      refusal: /at least 10 different characters \(of a hexadecimal token's 16\) \(it has 9\)/,
    },
    {
      name: "32 identical hex digits",
      token: "7".repeat(32),
      refusal: /at least 10 different characters .*\(it has 1\)/,
    },
    {
      name: "15 different characters that are not all hex digits",
      token: "abcdefghijklmno".repeat(3),
      refusal: /at least 16 different characters \(it has 15\)/,
    },
    { name: "openssl rand -base64 32", token: "q1W7fJ0x+Zs3kPa9/Lc2VbN8mRt5Yh6EuGd4Ko0Xi1M=" },
    { name: "the test harness's token", token: "test-admin-token-0123456789abcdefghij" },
  ];
  for (const { name, token, refusal } of adminTokens) {
    it(`${refusal ? "refuses" : "accepts"} an admin token of ${name}`, () => {
      if (!refusal) {
        assert.equal(loadConfig({ ...base, BILLING_ADMIN_TOKEN: token }).adminToken, token);
        return;
      }
      assert.throws(
        () => loadConfig({ ...base, BILLING_ADMIN_TOKEN: token }),
        (error: Error) =>
          error instanceof ConfigError &&
          refusal.test(error.message) &&
          !error.message.includes("\n") &&
          error.message.endsWith("use a long random value, e.g. from `openssl rand -base64 32`") &&
          (token.trim() === "" || !error.message.includes(token.trim())),
      );
    });
  }

  it("allows 60 failed authentications per address and minute unless BILLING_AUTH_FAILURES says otherwise; off disables", () => {
    assert.equal(loadConfig(base).authFailuresPerMinute, 60);
    assert.equal(loadConfig({ ...base, BILLING_AUTH_FAILURES: "" }).authFailuresPerMinute, 60);
    assert.equal(loadConfig({ ...base, BILLING_AUTH_FAILURES: "5" }).authFailuresPerMinute, 5);
    assert.equal(loadConfig({ ...base, BILLING_AUTH_FAILURES: "off" }).authFailuresPerMinute, null);
    assert.equal(loadConfig({ ...base, BILLING_AUTH_FAILURES: "OFF" }).authFailuresPerMinute, null);
    assert.equal(
      loadConfig({ ...base, BILLING_RATE_LIMIT: "off" }).authFailuresPerMinute,
      60,
      "not tied to the rate limit",
    );
    for (const bad of ["0", "-1", "1.5", "1e3", "ten", "60/m", "1000001", "none"]) {
      assert.throws(
        () => loadConfig({ ...base, BILLING_AUTH_FAILURES: bad }),
        (error: Error) =>
          error instanceof ConfigError &&
          error.message.startsWith("BILLING_AUTH_FAILURES must be") &&
          error.message.includes(`'${bad}'`),
        bad,
      );
    }
  });
});

describe("configuration: trusted proxies", () => {
  it("trusts no proxy unless BILLING_TRUSTED_PROXIES lists some, and refuses an entry that is not an address or range", () => {
    assert.deepEqual(loadConfig(base).trustedProxies, []);
    assert.deepEqual(loadConfig({ ...base, BILLING_TRUSTED_PROXIES: "" }).trustedProxies, []);
    assert.deepEqual(loadConfig({ ...base, BILLING_TRUSTED_PROXIES: "10.0.0.0/8, 192.0.2.7" }).trustedProxies, [
      "10.0.0.0/8",
      "192.0.2.7/32",
    ]);
    assert.throws(
      () => loadConfig({ ...base, BILLING_TRUSTED_PROXIES: "10.0.0.0/8, my-proxy" }),
      (error: Error) =>
        error instanceof ConfigError &&
        /^BILLING_TRUSTED_PROXIES: 'my-proxy' is not an IP address or a CIDR range/.test(error.message) &&
        !error.message.includes("\n"),
    );
  });
});

describe("configuration: issuing invoices", () => {
  it("issues drafts 3 days after their period unless BILLING_INVOICE_GRACE says otherwise; off: by hand only", () => {
    const grace = (value?: string) =>
      loadConfig({ BILLING_DATA_DIR: "memory://", ...(value === undefined ? {} : { BILLING_INVOICE_GRACE: value }) })
        .invoiceGraceMs;
    assert.equal(grace(), 3 * 86_400_000);
    assert.equal(grace(""), 3 * 86_400_000);
    assert.equal(grace("12h"), 12 * 3_600_000);
    assert.equal(grace("0s"), 0);
    assert.equal(grace("1.5d"), 36 * 3_600_000);
    assert.equal(grace("off"), null);
    for (const bad of ["3", "three days", "-1d", "3w", "on"]) {
      assert.throws(
        () => grace(bad),
        (e: Error) => e instanceof ConfigError && /BILLING_INVOICE_GRACE/.test(e.message) && /or off/.test(e.message),
        bad,
      );
    }
  });
});

describe("configuration: email", () => {
  it("sends no email without BILLING_SMTP_URL, and retries on 1m,5m,30m,2h,6h with a 30 s timeout by default", () => {
    assert.deepEqual(loadConfig(base).mail, {
      smtpUrl: null,
      from: "",
      timeoutMs: 30_000,
      retryScheduleMs: [60_000, 300_000, 1_800_000, 7_200_000, 21_600_000],
      pollIntervalMs: 5_000,
    });
    const mail = loadConfig({
      ...base,
      BILLING_SMTP_URL: "smtps://user:p%40ss@mail.example:465",
      BILLING_MAIL_FROM: "Acme Billing <billing@acme.example>",
      BILLING_SMTP_TIMEOUT: "10s",
      BILLING_MAIL_RETRY_SCHEDULE: "1m",
    }).mail;
    assert.equal(mail.smtpUrl, "smtps://user:p%40ss@mail.example:465");
    assert.equal(mail.from, "Acme Billing <billing@acme.example>");
    assert.equal(mail.timeoutMs, 10_000);
    assert.deepEqual(mail.retryScheduleMs, [60_000]);
  });

  it("refuses an SMTP URL that is not smtp:// or smtps://, or without a sender", () => {
    const refused = (env: Record<string, string>, words: RegExp) =>
      assert.throws(
        () => loadConfig({ ...base, ...env }),
        (error: Error) => error instanceof ConfigError && words.test(error.message),
      );
    refused({ BILLING_SMTP_URL: "http://mail.example", BILLING_MAIL_FROM: "a@b.example" }, /smtp:\/\/ or smtps:\/\//);
    refused({ BILLING_SMTP_URL: "not a url", BILLING_MAIL_FROM: "a@b.example" }, /not a URL/);
    refused({ BILLING_SMTP_URL: "smtp://mail.example:587" }, /BILLING_MAIL_FROM/);
    refused({ BILLING_SMTP_URL: "smtp://mail.example:587", BILLING_MAIL_FROM: "a@b.example\r\nBcc: x@y" }, /one line/);
  });
});
