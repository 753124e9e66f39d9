import { lookup as dnsLookup } from "node:dns";
import { isIP, type LookupFunction } from "node:net";
import { performance } from "node:perf_hooks";
import { Agent, buildConnector, request } from "undici";
import { checkEndpointUrl, isPublicAddress } from "./address-policy.js";

/**
 * The HTTP client webhook deliveries leave through (docs/decisions.md, "Webhooks"; docs/architecture.md, "Outbox and delivery").
 *
 * SSRF defence happens at connect time, inside undici's connector: host names are resolved once by our own
 * `lookup`, every address is checked with `isPublicAddress`, and the socket connects to exactly those checked
 * addresses (no second DNS answer, so no rebinding between check and connect). IP-literal hosts never reach
 * a lookup, so the connector checks them itself. TLS still verifies the certificate against the URL's host
 * name (undici passes it as `servername`). Redirects are never followed: undici 7 only follows them through
 * the redirect interceptor, which this agent does not use.
 */

export interface PostResult {
  status: number | null;
  error: string | null;
  durationMs: number;
}

export interface OutboundHttp {
  /**
   * POSTs `body` with `headers` to `url`: resolves the host, refuses unless every resolved address is public
   * (unless allowPrivate), connects to the address that was checked (no second DNS answer), keeps TLS
   * host-name verification, never follows redirects (a 3xx is just a status), gives up after timeoutMs
   * (status null, error "timeout"), reads at most 64 KiB of the response body and discards it. Never throws:
   * every failure (DNS, refused address, connection reset, TLS) comes back as { status: null, error: <short reason> }.
   *
   * `status` is only set when the whole exchange worked: a response whose body breaks off (or times out)
   * after the status line comes back as { status: null, error }.
   */
  post(
    url: string,
    body: string,
    headers: Record<string, string>,
    options?: { timeoutMs?: number },
  ): Promise<PostResult>;
  close(): Promise<void>;
}

/** How much of a response body we read before hanging up; receivers only owe us a status. */
const MAX_RESPONSE_BODY_BYTES = 64 * 1024;

const DEFAULT_MAX_CONNECTIONS_PER_ORIGIN = 10;
const ADDRESS_NOT_PUBLIC = "ERR_ADDRESS_NOT_PUBLIC";

export function createOutboundHttp(options: {
  timeoutMs: number;
  allowPrivate: boolean;
  maxConnectionsPerOrigin?: number;
}): OutboundHttp {
  const { timeoutMs: defaultTimeoutMs, allowPrivate } = options;
  const baseConnect = buildConnector({ lookup: checkedLookup(allowPrivate), timeout: defaultTimeoutMs });
  const connect: buildConnector.connector = (connectOptions, callback) => {
    // Node's net.connect skips the lookup for IP literals, so they are checked here.
    const host = connectOptions.hostname;
    if (!allowPrivate && isIP(host) !== 0 && !isPublicAddress(host)) {
      callback(notPublicError(host, host), null);
      return;
    }
    baseConnect(connectOptions, callback);
  };
  const agent = new Agent({
    connect,
    connections: options.maxConnectionsPerOrigin ?? DEFAULT_MAX_CONNECTIONS_PER_ORIGIN,
    headersTimeout: defaultTimeoutMs,
    bodyTimeout: defaultTimeoutMs,
  });
  let closing: Promise<void> | null = null;

  async function exchange(
    url: URL,
    body: string,
    headers: Record<string, string>,
    signal: AbortSignal,
    timeoutMs: number,
  ) {
    try {
      const response = await request(url, {
        method: "POST",
        body,
        headers,
        dispatcher: agent,
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      let read = 0;
      try {
        // Drain up to the limit and drop the bytes; leaving the loop early destroys the stream, which
        // closes that connection rather than reading the rest of a huge body.
        for await (const chunk of response.body) {
          read += (chunk as Buffer).length;
          if (read >= MAX_RESPONSE_BODY_BYTES) break;
        }
      } finally {
        if (!response.body.readableEnded) response.body.destroy();
      }
      return { status: response.statusCode, error: null };
    } catch (error) {
      return { status: null, error: signal.aborted ? "timeout" : describeError(error) };
    }
  }

  return {
    async post(url, body, headers, postOptions) {
      const started = performance.now();
      const result = (status: number | null, error: string | null): PostResult => ({
        status,
        error,
        durationMs: Math.round(performance.now() - started),
      });
      if (closing) return result(null, "client closed");
      const verdict = checkEndpointUrl(url, { allowPrivate });
      if (!verdict.ok) return result(null, `refused: ${verdict.reason}`);

      const timeoutMs = postOptions?.timeoutMs ?? defaultTimeoutMs;
      const controller = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      // The deadline wins the race even if undici is still waiting on DNS or a connect: the abort then
      // tears the request down in the background (exchange() never rejects).
      const deadline = new Promise<PostResult>((resolve) => {
        timer = setTimeout(() => {
          controller.abort();
          resolve(result(null, "timeout"));
        }, timeoutMs);
      });
      try {
        const attempt = exchange(verdict.url, body, headers, controller.signal, timeoutMs).then((r) =>
          result(r.status, r.error),
        );
        return await Promise.race([attempt, deadline]);
      } catch (error) {
        return result(null, describeError(error));
      } finally {
        clearTimeout(timer);
      }
    },
    close() {
      closing ??= agent.close().catch(() => agent.destroy());
      return closing;
    },
  };
}

/** dns.lookup, once, with every answer checked; net.connect then uses exactly these addresses. */
function checkedLookup(allowPrivate: boolean): LookupFunction {
  return (hostname, lookupOptions, callback) => {
    dnsLookup(hostname, { ...lookupOptions, all: true }, (error, addresses) => {
      if (error) return callback(error, "");
      const first = addresses[0];
      if (!first)
        return callback(Object.assign(new Error(`no address for ${hostname}`), { code: "ENOTFOUND", hostname }), "");
      if (!allowPrivate) {
        const refused = addresses.find((a) => !isPublicAddress(a.address));
        if (refused) return callback(notPublicError(hostname, refused.address), "");
      }
      if (lookupOptions.all) callback(null, addresses);
      else callback(null, first.address, first.family);
    });
  };
}

function notPublicError(host: string, address: string): NodeJS.ErrnoException {
  const what = host === address ? `address ${address}` : `${host} resolves to ${address}, which`;
  return Object.assign(new Error(`refused: ${what} is not public`), { code: ADDRESS_NOT_PUBLIC });
}

const TIMEOUT_CODES = new Set([
  "UND_ERR_CONNECT_TIMEOUT",
  "UND_ERR_HEADERS_TIMEOUT",
  "UND_ERR_BODY_TIMEOUT",
  "ETIMEDOUT",
]);
const DNS_CODES = new Set(["ENOTFOUND", "EAI_AGAIN", "EAI_FAIL", "EAI_NODATA", "EAI_NONAME"]);
const SHORT_REASONS: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset",
  EPIPE: "connection reset",
  UND_ERR_SOCKET: "connection closed",
  UND_ERR_CLOSED: "client closed",
  UND_ERR_DESTROYED: "client closed",
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: "response body shorter than its content-length",
  UND_ERR_HEADERS_OVERFLOW: "response headers too large",
  EHOSTUNREACH: "host unreachable",
  ENETUNREACH: "network unreachable",
};

/** A short, log-safe reason for a failed exchange. */
function describeError(error: unknown): string {
  let e = error as (Error & { code?: unknown; errors?: unknown }) | null | undefined;
  // Happy-eyeballs connects (autoSelectFamily) report an AggregateError of the per-address failures.
  if (e && Array.isArray(e.errors) && e.errors.length > 0 && typeof e.code !== "string") e = e.errors[0] as typeof e;
  const code = typeof e?.code === "string" ? e.code : undefined;
  const message = typeof e?.message === "string" ? e.message : String(error);
  if (code === ADDRESS_NOT_PUBLIC) return message;
  if (code && TIMEOUT_CODES.has(code)) return "timeout";
  if (code && DNS_CODES.has(code)) return `dns lookup failed (${code})`;
  if (code && SHORT_REASONS[code]) return SHORT_REASONS[code];
  if (code && isTlsCode(code)) return `tls: ${code}`;
  if (code === "UND_ERR_INVALID_ARG") return clip(`invalid request: ${message}`);
  return clip(code ? `${code}: ${message}` : message);
}

function isTlsCode(code: string): boolean {
  return (
    code.startsWith("ERR_TLS_") ||
    code.startsWith("ERR_SSL_") ||
    code.startsWith("CERT_") ||
    code.startsWith("UNABLE_TO_") ||
    code.includes("SELF_SIGNED") ||
    code === "HOSTNAME_MISMATCH" ||
    code === "EPROTO"
  );
}

function clip(text: string): string {
  return text.length > 200 ? `${text.slice(0, 197)}...` : text;
}
