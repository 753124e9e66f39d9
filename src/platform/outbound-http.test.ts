import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { createServer as createTlsServer, type Server as TlsServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { after, before, describe, it } from "node:test";
import { createOutboundHttp, type OutboundHttp } from "./outbound-http.js";

const FIFTY_MB = 50 * 1024 * 1024;

/** A local receiver on 127.0.0.1 that counts connections and requests per path. */
class Receiver {
  readonly server: Server;
  connections = 0;
  readonly hits = new Map<string, number>();
  readonly bodies: Array<{
    path: string;
    method: string;
    contentType: string | undefined;
    signature: string | undefined;
    body: string;
  }> = [];
  huge = deferred<{ bytesWritten: number; finished: boolean }>();

  constructor(
    private readonly routes: Record<string, (req: IncomingMessage, res: ServerResponse, self: Receiver) => void> = {},
  ) {
    this.server = createServer((req, res) => {
      const path = new URL(req.url ?? "/", "http://x").pathname;
      this.hits.set(path, (this.hits.get(path) ?? 0) + 1);
      res.on("error", () => {});
      const route = this.routes[path];
      if (route) route(req, res, this);
      else {
        res.writeHead(404);
        res.end();
      }
    });
    this.server.on("connection", () => {
      this.connections += 1;
    });
  }

  async listen(): Promise<number> {
    await new Promise<void>((resolve) => this.server.listen(0, "127.0.0.1", resolve));
    return this.port;
  }

  get port(): number {
    return (this.server.address() as AddressInfo).port;
  }

  hitsOf(path: string): number {
    return this.hits.get(path) ?? 0;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

function deferred<T>() {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

function redirectTo(status: number) {
  return (_req: IncomingMessage, res: ServerResponse, self: Receiver) => {
    res.writeHead(status, { location: `http://127.0.0.1:${self.port}/target` });
    res.end();
  };
}

const routes: Record<string, (req: IncomingMessage, res: ServerResponse, self: Receiver) => void> = {
  "/ok": (req, res, self) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      self.bodies.push({
        path: "/ok",
        method: req.method ?? "",
        contentType: req.headers["content-type"],
        signature: req.headers["x-signature"] as string | undefined,
        body: Buffer.concat(chunks).toString("utf8"),
      });
      res.writeHead(200, { "content-type": "text/plain" });
      res.end("thanks");
    });
  },
  "/accepted": (_req, res) => {
    res.writeHead(202);
    res.end();
  },
  "/301": redirectTo(301),
  "/302": redirectTo(302),
  "/303": redirectTo(303),
  "/307": redirectTo(307),
  "/308": redirectTo(308),
  "/target": (_req, res) => {
    res.writeHead(200);
    res.end("followed");
  },
  "/fail": (_req, res) => {
    res.writeHead(500, { "content-type": "text/plain" });
    res.end("boom");
  },
  "/hang": () => {
    // Never answers.
  },
  "/trickle": (_req, res) => {
    // Headers at once, then a byte every 50 ms forever: no gap ever reaches a between-chunks timeout.
    res.writeHead(200, { "content-type": "text/plain" });
    const timer = setInterval(() => res.write("."), 50);
    res.on("close", () => clearInterval(timer));
  },
  "/drop": (req) => {
    // Reads the request, then hangs up without a status line.
    req.socket.destroy();
  },
  "/cut": (_req, res) => {
    // Promises 1000 bytes, sends 100, then the connection dies.
    res.writeHead(200, { "content-length": "1000" });
    res.write("x".repeat(100), () => res.socket?.destroy());
  },
  "/huge": (_req, res, self) => {
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    let sent = 0;
    res.writeHead(200, { "content-type": "application/octet-stream", "content-length": String(FIFTY_MB) });
    res.on("close", () => self.huge.resolve({ bytesWritten: sent, finished: res.writableFinished }));
    const pump = () => {
      while (sent < FIFTY_MB && !res.destroyed) {
        sent += chunk.length;
        if (!res.write(chunk)) {
          res.once("drain", pump);
          return;
        }
      }
      if (!res.destroyed) res.end();
    };
    pump();
  },
};

function elapsedSince(start: number): number {
  return performance.now() - start;
}

describe("outbound HTTP client", () => {
  const receiver = new Receiver(routes);
  let base = "";
  // allowPrivate so that the local receiver can be reached at all.
  const client = createOutboundHttp({ timeoutMs: 2000, allowPrivate: true });
  const quick = createOutboundHttp({ timeoutMs: 300, allowPrivate: true });

  before(async () => {
    base = `http://127.0.0.1:${await receiver.listen()}`;
  });
  after(async () => {
    await Promise.all([client.close(), quick.close()]);
    await receiver.close();
  });

  it("returns a 2xx status and sends the body and headers as given", async () => {
    const payload = JSON.stringify({ id: "evt_1", type: "customer.created" });
    const result = await client.post(`${base}/ok`, payload, {
      "content-type": "application/json",
      "x-signature": "t=1,v1=abc",
    });
    assert.equal(result.status, 200);
    assert.equal(result.error, null);
    assert.ok(result.durationMs >= 0 && result.durationMs < 2000);
    const seen = receiver.bodies.at(-1);
    assert.deepEqual(seen, {
      path: "/ok",
      method: "POST",
      contentType: "application/json",
      signature: "t=1,v1=abc",
      body: payload,
    });
  });

  it("returns a 202 with an empty body", async () => {
    assert.deepEqual(await statusAndError(client.post(`${base}/accepted`, "{}", {})), { status: 202, error: null });
  });

  it("resolves a host name through the checked lookup when private targets are allowed", async () => {
    const result = await client.post(`http://localhost:${receiver.port}/accepted`, "{}", {});
    assert.deepEqual({ status: result.status, error: result.error }, { status: 202, error: null });
  });

  for (const status of [301, 302, 303, 307, 308]) {
    it(`returns a ${status} as a status and does not follow its Location`, async () => {
      const before = receiver.hitsOf("/target");
      const result = await client.post(`${base}/${status}`, "{}", {});
      assert.deepEqual({ status: result.status, error: result.error }, { status, error: null });
      assert.equal(receiver.hitsOf("/target"), before);
      assert.equal(before, 0);
    });
  }

  it("returns a 500 as a status", async () => {
    assert.deepEqual(await statusAndError(client.post(`${base}/fail`, "{}", {})), { status: 500, error: null });
  });

  it("gives up on a server that never answers after the client's timeout", async () => {
    const start = performance.now();
    const result = await quick.post(`${base}/hang`, "{}", {});
    const elapsed = elapsedSince(start);
    assert.deepEqual({ status: result.status, error: result.error }, { status: null, error: "timeout" });
    assert.ok(elapsed >= 290, `gave up too early: ${elapsed} ms`);
    assert.ok(elapsed < 300 + 200, `gave up too late: ${elapsed} ms`);
    assert.ok(result.durationMs >= 290 && result.durationMs < 500, `durationMs ${result.durationMs}`);
  });

  it("honours a per-call timeout shorter than the client's", async () => {
    const start = performance.now();
    const result = await client.post(`${base}/hang`, "{}", {}, { timeoutMs: 300 });
    const elapsed = elapsedSince(start);
    assert.deepEqual({ status: result.status, error: result.error }, { status: null, error: "timeout" });
    assert.ok(elapsed >= 290 && elapsed < 500, `took ${elapsed} ms`);
  });

  it("gives up on a body that keeps trickling in once the overall timeout passes", async () => {
    const start = performance.now();
    const result = await quick.post(`${base}/trickle`, "{}", {});
    const elapsed = elapsedSince(start);
    assert.deepEqual({ status: result.status, error: result.error }, { status: null, error: "timeout" });
    assert.ok(elapsed >= 290 && elapsed < 500, `took ${elapsed} ms`);
  });

  it("reports an error when the connection is closed before any response", async () => {
    const result = await client.post(`${base}/drop`, "{}", {});
    assert.equal(result.status, null);
    assert.equal(typeof result.error, "string");
    assert.notEqual(result.error, "timeout");
    assert.ok(result.durationMs < 2000);
  });

  it("reports an error, not the status, when the connection is closed mid-response", async () => {
    const result = await client.post(`${base}/cut`, "{}", {});
    assert.equal(result.status, null);
    assert.equal(typeof result.error, "string");
    assert.notEqual(result.error, "timeout");
    assert.ok(result.durationMs < 2000);
  });

  it("reads only the start of a 50 MB body and hangs up promptly", async () => {
    const start = performance.now();
    const result = await client.post(`${base}/huge`, "{}", {});
    const elapsed = elapsedSince(start);
    assert.deepEqual({ status: result.status, error: result.error }, { status: 200, error: null });
    assert.ok(elapsed < 1000, `took ${elapsed} ms`);
    const server = await receiver.huge.promise;
    assert.equal(server.finished, false, "the server managed to send the whole body");
    assert.ok(
      server.bytesWritten < FIFTY_MB / 5,
      `the server got ${server.bytesWritten} bytes out before the client hung up`,
    );
  });

  it("reports a refused connection", async () => {
    const closed = new Receiver();
    const port = await closed.listen();
    await closed.close();
    const result = await client.post(`http://127.0.0.1:${port}/`, "{}", {});
    assert.deepEqual({ status: result.status, error: result.error }, { status: null, error: "connection refused" });
  });

  it("reports an invalid header instead of throwing", async () => {
    const result = await client.post(`${base}/ok`, "{}", { "x-bad": "a\r\nb" });
    assert.equal(result.status, null);
    assert.match(result.error ?? "", /invalid/i);
  });

  it("refuses a URL that is not a URL instead of throwing", async () => {
    const result = await client.post("not a url", "{}", {});
    assert.equal(result.status, null);
    assert.match(result.error ?? "", /^refused: /);
  });
});

describe("outbound HTTP client with private targets refused", () => {
  const receiver = new Receiver(routes);
  const strict = createOutboundHttp({ timeoutMs: 2000, allowPrivate: false });
  const permissive = createOutboundHttp({ timeoutMs: 2000, allowPrivate: true });
  let port = 0;

  before(async () => {
    port = await receiver.listen();
  });
  after(async () => {
    await Promise.all([strict.close(), permissive.close()]);
    await receiver.close();
  });

  const cases: Array<{ name: string; url: (port: number) => string; error: RegExp }> = [
    {
      name: "refuses the loopback IPv4 literal",
      url: (p) => `https://127.0.0.1:${p}/ok`,
      error: /127\.0\.0\.1 is not public/,
    },
    {
      name: "refuses localhost because its lookup answers a loopback address",
      url: (p) => `https://localhost:${p}/ok`,
      error: /^refused: localhost resolves to (127\.0\.0\.1|::1), which is not public$/,
    },
    {
      name: "refuses loopback written as one decimal number",
      url: (p) => `https://2130706433:${p}/ok`,
      error: /127\.0\.0\.1 is not public/,
    },
    {
      name: "refuses loopback written in hexadecimal shorthand",
      url: (p) => `https://0x7f.1:${p}/ok`,
      error: /127\.0\.0\.1 is not public/,
    },
    {
      name: "refuses the IPv4-mapped loopback literal",
      url: (p) => `https://[::ffff:127.0.0.1]:${p}/ok`,
      error: /not public/,
    },
    { name: "refuses the IPv6 loopback literal", url: (p) => `https://[::1]:${p}/ok`, error: /::1 is not public/ },
    {
      name: "refuses the unspecified address, which connects to this host",
      url: (p) => `https://0.0.0.0:${p}/ok`,
      error: /not public/,
    },
    { name: "refuses plain http", url: (p) => `http://127.0.0.1:${p}/ok`, error: /https/ },
    {
      name: "refuses the cloud metadata address",
      url: () => "https://169.254.169.254/latest/meta-data/",
      error: /not public/,
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const result = await strict.post(c.url(port), "{}", {});
      assert.equal(result.status, null);
      assert.match(result.error ?? "", c.error);
      assert.equal(receiver.connections, 0, "a connection reached the server");
    });
  }

  it("lets the same server be reached by a client that allows private targets (control)", async () => {
    assert.equal(receiver.connections, 0);
    const result = await permissive.post(`http://127.0.0.1:${port}/ok`, "{}", {});
    assert.equal(result.status, 200);
    assert.equal(receiver.connections, 1);
    assert.equal(receiver.hitsOf("/ok"), 1);
  });
});

describe("outbound HTTP client over TLS", () => {
  let dir = "";
  let server: TlsServer | undefined;
  let handshakes = 0;
  let requests = 0;
  const client = createOutboundHttp({ timeoutMs: 2000, allowPrivate: true });

  before(async () => {
    // A throwaway self-signed certificate for localhost, made now rather than committed.
    dir = mkdtempSync(join(tmpdir(), "outbound-http-test-"));
    try {
      execFileSync(
        "openssl",
        [
          "req",
          "-x509",
          "-newkey",
          "ec",
          "-pkeyopt",
          "ec_paramgen_curve:prime256v1",
          "-nodes",
          "-keyout",
          join(dir, "key.pem"),
          "-out",
          join(dir, "cert.pem"),
          "-days",
          "1",
          "-subj",
          "/CN=localhost",
          "-addext",
          "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ],
        { stdio: "ignore" },
      );
    } catch {
      return; // no openssl: the test below skips itself
    }
    server = createTlsServer(
      { key: readFileSync(join(dir, "key.pem")), cert: readFileSync(join(dir, "cert.pem")) },
      (_req, res) => {
        requests += 1;
        res.writeHead(200);
        res.end();
      },
    );
    server.on("secureConnection", () => {
      handshakes += 1;
    });
    server.on("tlsClientError", () => {});
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  });
  after(async () => {
    await client.close();
    if (server) {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server!.close(() => resolve()));
    }
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it("keeps certificate verification on: an untrusted certificate is an error, not a request", async (t) => {
    if (!server) return t.skip("openssl is not available");
    const port = (server.address() as AddressInfo).port;
    const result = await client.post(`https://localhost:${port}/`, "{}", {});
    assert.equal(result.status, null);
    assert.match(result.error ?? "", /^tls: (DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)$/);
    assert.equal(handshakes, 0);
    assert.equal(requests, 0);
  });
});

describe("closing the outbound HTTP client", () => {
  it("answers a post after close with an error instead of throwing", async () => {
    const client: OutboundHttp = createOutboundHttp({ timeoutMs: 300, allowPrivate: true });
    await client.close();
    await client.close();
    const result = await client.post("http://127.0.0.1:9/", "{}", {});
    assert.deepEqual({ status: result.status, error: result.error }, { status: null, error: "client closed" });
  });
});

async function statusAndError(pending: Promise<{ status: number | null; error: string | null }>) {
  const { status, error } = await pending;
  return { status, error };
}
