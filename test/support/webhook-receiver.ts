/**
 * The webhook receiver of the suites: a real `node:http` server on 127.0.0.1 that records raw bodies and
 * headers and answers what the test asks, a port nothing listens on, and the two official verifiers
 * (Stripe's and standardwebhooks) to check signatures.
 */
import assert from "node:assert/strict";
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from "node:http";
import { createServer as createNetServer, type AddressInfo } from "node:net";
import { after } from "node:test";
import { Webhook } from "standardwebhooks";
import Stripe from "stripe";

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The raw body, exactly as it arrived (utf8). */
  body: string;
  /** performance.now() when the whole body had arrived. */
  receivedAt: number;
  /** performance.now() when the sender hung up or the answer was sent; undefined while open. */
  closedAt: number | undefined;
}

/** What the receiver does with a request: answer a status (with headers), or hold it open without answering. */
export type Answer = { status: number; headers?: Record<string, string> } | "hang";

export interface Receiver {
  /** `http://127.0.0.1:<port>/hook`. */
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Decides each answer; default 200. Replace it (or use answerWith / hang) to program the receiver. */
  answer: (request: ReceivedRequest, index: number) => Answer;
  answerWith(status: number, headers?: Record<string, string>): void;
  hang(): void;
  /** Answers every request held open so far with `status`. */
  releaseHeld(status: number): void;
  close(): Promise<void>;
}

/** Starts a receiver on 127.0.0.1, port 0. */
export async function startReceiver(path = "/hook"): Promise<Receiver> {
  const requests: ReceivedRequest[] = [];
  const held: ServerResponse[] = [];
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const record: ReceivedRequest = {
        method: req.method ?? "",
        path: req.url ?? "",
        headers: req.headers,
        body: Buffer.concat(chunks).toString("utf8"),
        receivedAt: performance.now(),
        closedAt: undefined,
      };
      res.on("close", () => {
        record.closedAt = performance.now();
      });
      const index = requests.push(record) - 1;
      const answer = receiver.answer(record, index);
      if (answer === "hang") {
        held.push(res);
        return;
      }
      res.writeHead(answer.status, { "content-type": "text/plain", ...(answer.headers ?? {}) });
      res.end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const receiver: Receiver = {
    url: `http://127.0.0.1:${port}${path}`,
    port,
    requests,
    answer: () => ({ status: 200 }),
    answerWith(status, headers) {
      receiver.answer = () => ({ status, ...(headers ? { headers } : {}) });
    },
    hang() {
      receiver.answer = () => "hang";
    },
    releaseHeld(status) {
      for (const res of held.splice(0)) {
        res.writeHead(status, { "content-type": "text/plain" });
        res.end("ok");
      }
    },
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return receiver;
}

/** Receivers started through it are closed after the suite. Call at suite level (inside describeEachEngine). */
export function receiverPool(): { start(path?: string): Promise<Receiver> } {
  const started: Receiver[] = [];
  after(async () => {
    await Promise.all(started.map((r) => r.close()));
  });
  return {
    async start(path) {
      const receiver = await startReceiver(path);
      started.push(receiver);
      return receiver;
    },
  };
}

/** A TCP port nothing listens on (bound, then released). */
export async function closedPort(): Promise<number> {
  const server = createNetServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}

/** The requests whose event announces the resource with this id (`data.object.id`). */
export function requestsAbout(receiver: Receiver, resourceId: string): ReceivedRequest[] {
  return receiver.requests.filter(
    (r) => (JSON.parse(r.body) as { data: { object: { id: string } } }).data.object.id === resourceId,
  );
}

const stripe = new Stripe("sk_test_x");

/** Verifies Service-Signature with Stripe's own verifier; returns the event it parsed. Throws when it does not verify. */
function verifyWithStripe(request: ReceivedRequest, secret: string): Record<string, any> {
  const header = request.headers["service-signature"];
  assert.equal(typeof header, "string", "Service-Signature present");
  return stripe.webhooks.constructEvent(request.body, header as string, secret) as unknown as Record<string, any>;
}

/** Verifies the webhook-* headers with the standardwebhooks package. Throws when it does not verify. */
function verifyWithStandardWebhooks(request: ReceivedRequest, secret: string): Record<string, any> {
  const h = request.headers;
  return new Webhook(secret).verify(request.body, {
    "webhook-id": String(h["webhook-id"]),
    "webhook-timestamp": String(h["webhook-timestamp"]),
    "webhook-signature": String(h["webhook-signature"]),
  }) as Record<string, any>;
}

/** Asserts the request verifies with `secret` under both verifiers. */
export function assertSigned(request: ReceivedRequest, secret: string): void {
  const viaStripe = verifyWithStripe(request, secret);
  const viaStandard = verifyWithStandardWebhooks(request, secret);
  assert.deepEqual(viaStripe, JSON.parse(request.body));
  assert.deepEqual(viaStandard, JSON.parse(request.body));
}

/** Asserts the request does NOT verify with `secret` under either verifier. */
export function assertNotSignedWith(request: ReceivedRequest, secret: string): void {
  assert.throws(() => verifyWithStripe(request, secret), /signature/i);
  assert.throws(() => verifyWithStandardWebhooks(request, secret), /signature/i);
}

/** The milliseconds between two ISO datetimes. */
export const msBetween = (from: string, to: string): number => new Date(to).getTime() - new Date(from).getTime();
