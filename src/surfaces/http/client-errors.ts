// What the HTTP surface answers to a request node itself refuses, before Fastify sees it: a client too slow
// to send it (408), a request line or headers over node's 16 KiB (414, 431), a method node's parser does not
// know (405 or 404, as Fastify would answer), bytes that are not HTTP (400). Written to the socket by hand in
// the API's `{ error, code }` shape, since there is no request to reply to; then the connection is closed.
import type { Socket } from "node:net";

/** The answer to each error node raises, by its code; any other code is 400 (answerClientError). */
const CLIENT_ERRORS: Record<string, { status: string; error: string; code: string }> = {
  ERR_HTTP_REQUEST_TIMEOUT: {
    status: "408 Request Timeout",
    error: "The request was not received in time",
    code: "request_timeout",
  },
  HPE_HEADER_OVERFLOW: {
    status: "431 Request Header Fields Too Large",
    error: "The request headers are too large",
    code: "headers_too_large",
  },
  URI_TOO_LONG: { status: "414 URI Too Long", error: "The URL is too long", code: "uri_too_long" },
  METHOD_NOT_ALLOWED: {
    status: "405 Method Not Allowed",
    error: "This method is not allowed on this path",
    code: "method_not_allowed",
  },
  NOT_FOUND: { status: "404 Not Found", error: "Not found", code: "not_found" },
};

/** A request line longer than this, in a request over node's header limit, is why it is over: 414. */
const MAX_REQUEST_LINE = 8 * 1024;

/**
 * The request line of what node could not parse, when it has one: node counts the URL into its header limit,
 * so a request line that does not end within the bytes received is a URL too long (414), not headers (431).
 */
function requestLineOf(error: Error & { rawPacket?: unknown }): { line: string | undefined; ended: boolean } {
  const raw = Buffer.isBuffer(error.rawPacket) ? error.rawPacket.toString("latin1") : "";
  const end = raw.indexOf("\r\n");
  return { line: end === -1 ? raw : raw.slice(0, end), ended: end !== -1 };
}

/**
 * node's clientError handler. `methodsOf` gives the methods a path answers (http-app.ts, routeMethods), for the
 * 405 of an unknown method and its `Allow`.
 */
export function answerClientError(methodsOf: (path: string) => string[]) {
  return (error: Error & { code?: string; rawPacket?: unknown }, socket: Socket): void => {
    if (error.code === "ECONNRESET" || socket.destroyed) return;
    let known = CLIENT_ERRORS[error.code ?? ""];
    let allow: string[] = [];
    const { line, ended } = requestLineOf(error);
    if (error.code === "HPE_HEADER_OVERFLOW" && (!ended || (line?.length ?? 0) > MAX_REQUEST_LINE))
      known = CLIENT_ERRORS.URI_TOO_LONG;
    if (error.code === "HPE_INVALID_METHOD" && line) {
      // A method node's parser does not know (QUERY, say): 405 on a path we serve, 404 elsewhere, as for
      // any method we do not route.
      const path = /^[A-Z-]+ (\/[^ ?]*)/.exec(line)?.[1];
      allow = path === undefined ? [] : methodsOf(path);
      if (path !== undefined) known = allow.length > 0 ? CLIENT_ERRORS.METHOD_NOT_ALLOWED : CLIENT_ERRORS.NOT_FOUND;
    }
    known ??= { status: "400 Bad Request", error: "The request is not valid HTTP", code: "invalid_request" };
    const body = JSON.stringify({ error: known.error, code: known.code });
    const allowHeader = allow.length > 0 ? `Allow: ${allow.join(", ")}\r\n` : "";
    if (socket.writable) {
      socket.write(
        `HTTP/1.1 ${known.status}\r\nContent-Length: ${Buffer.byteLength(body)}\r\nContent-Type: application/json; charset=utf-8\r\n${allowHeader}Connection: close\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}
