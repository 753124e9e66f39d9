/**
 * How the agent surface (OAuth endpoints, sign-in pages, /mcp) answers requests it cannot serve. A body that
 * does not parse, is too large, has the wrong type or holds text PostgreSQL cannot store is the client's
 * mistake: a 4xx in the shape the endpoint's clients read. Only a bug is a 500, and is logged.
 */
import type { ErrorRequestHandler, Request, RequestHandler } from "express";
import {
  InsufficientScopeError,
  InvalidTokenError,
  MethodNotAllowedError,
  OAuthError,
  ServerError,
  TooManyRequestsError,
} from "@modelcontextprotocol/sdk/server/auth/errors.js";
import {
  decodeUtf8,
  invalidEncodingError,
  percentEscapesAreUtf8,
  unstorableText,
} from "../../domain/kernel/storable-text.js";
import { OAuthProtocolError } from "../../domain/oauth/oauth-protocol.js";
import type { Logger } from "../../platform/logger.js";
import { oauthDescription } from "./mcp-argument-problems.js";
import { errorPage, PAGE_HEADERS } from "./oauth-pages.js";

/** A refusal of the request's body, shaped like body-parser's errors so that one mapping reads both. */
class BodyError extends Error {
  readonly expose = true;
  readonly statusCode: number;
  constructor(
    readonly status: number,
    readonly type: string,
    message: string,
  ) {
    super(message);
    this.statusCode = status;
  }
}

/** Where an error happened decides its shape: an HTML page, JSON-RPC, or an RFC 6749 error body. */
type Surface = "page" | "mcp" | "oauth";

const PAGES = new Set(["/oauth/login", "/oauth/consent"]);

function surfaceOf(req: Request): Surface {
  const path = (req.originalUrl.split("?")[0] ?? "").replace(/\/+$/, "");
  if (PAGES.has(path)) return "page";
  return path === "/mcp" ? "mcp" : "oauth";
}

/** What the client got wrong: HTTP status, OAuth error code, a sentence, and the JSON-RPC code for /mcp. */
export interface ClientError {
  status: number;
  code: string;
  description: string;
  rpcCode: number;
}

const size = (bytes: number) =>
  bytes >= 1024 * 1024 ? `${bytes / (1024 * 1024)} MB` : bytes >= 1024 ? `${bytes / 1024} KB` : `${bytes} bytes`;

/** body-parser's errors (and BodyError) by type: the sentence answered, and the JSON-RPC code on /mcp. */
const BODY_ERRORS: Record<string, (error: Record<string, unknown>) => { description: string; rpcCode?: number }> = {
  "entity.parse.failed": () => ({ description: "The body is not valid JSON", rpcCode: -32700 }),
  "entity.too.large": (e) => ({
    description: typeof e.limit === "number" ? `The body is larger than ${size(e.limit)}` : "The body is too large",
  }),
  "parameters.too.many": () => ({ description: "The form has too many fields" }),
  "querystring.parse.rangeError": () => ({ description: "The form nests its fields too deeply" }),
  "charset.unsupported": (e) => ({
    description: `The charset ${String(e.charset ?? "")} is not supported: send UTF-8`,
  }),
  "encoding.unsupported": (e) => ({ description: `The content encoding ${String(e.encoding ?? "")} is not supported` }),
  "request.aborted": () => ({ description: "The request was aborted before its body was received" }),
  "request.size.invalid": () => ({ description: "The body's length does not match its Content-Length" }),
  "entity.unstorable": (e) => ({ description: String(e.message), rpcCode: -32600 }),
  "entity.encoding.invalid": (e) => ({ description: String(e.message), rpcCode: -32700 }),
  "entity.type.unsupported": (e) => ({ description: String(e.message) }),
};

function oauthStatus(error: OAuthError): number | undefined {
  if (error instanceof ServerError) return undefined;
  if (error instanceof InvalidTokenError) return 401;
  if (error instanceof InsufficientScopeError) return 403;
  if (error instanceof MethodNotAllowedError) return 405;
  if (error instanceof TooManyRequestsError) return 429;
  return 400;
}

/** The client error this is, or undefined for a bug. */
export function clientErrorOf(error: unknown): ClientError | undefined {
  if (error instanceof OAuthProtocolError)
    return { status: 400, code: error.code, description: error.message, rpcCode: -32600 };
  if (error instanceof OAuthError) {
    const status = oauthStatus(error);
    return status === undefined
      ? undefined
      : { status, code: error.errorCode, description: error.message, rpcCode: -32000 };
  }
  // decodeURIComponent of malformed percent-encoding (a path or query the router had to decode)
  if (error instanceof URIError)
    return {
      status: 400,
      code: "invalid_request",
      description: "The URL holds malformed percent-encoding",
      rpcCode: -32000,
    };
  if (error === null || typeof error !== "object") return undefined;
  const fields = error as Record<string, unknown>;
  const status = typeof fields.status === "number" ? fields.status : fields.statusCode;
  // A 4xx from body-parser (or http-errors); its 5xx (a stream read twice, say) are bugs of ours.
  if (typeof status !== "number" || status < 400 || status > 499) return undefined;
  const known = typeof fields.type === "string" ? BODY_ERRORS[fields.type]?.(fields) : undefined;
  return {
    status,
    code: status === 405 ? "method_not_allowed" : "invalid_request",
    description: known?.description ?? "The request body could not be read",
    rpcCode: known?.rpcCode ?? -32000,
  };
}

/** JSON-RPC's codes for a call the server cannot take (JSON-RPC 2.0, 5.1). */
export const INVALID_PARAMS = -32602;
const INTERNAL_ERROR = -32603;

/**
 * A JSON-RPC error answered as it is: the SDK's protocol layer answers a thrown error with its numeric
 * `code` and its `message` (the SDK's own McpError would prefix "MCP error -32602: " to the sentence).
 */
export class RpcError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** What a server fault tells the client: nothing of the fault itself (a database's message, SQL, a stack). */
export const internalRpcError = (): RpcError => new RpcError(INTERNAL_ERROR, "Internal error");

/**
 * Every error_description the OAuth endpoints answer, the SDK's included, goes through oauthDescription:
 * in a JSON body (the token, registration and revocation endpoints, /authorize before its redirect URI is
 * known) and in an error redirect (/authorize after), which also gets the request's state back.
 */
export const describeOAuthErrors: RequestHandler = (req, res, next) => {
  const json = res.json.bind(res);
  res.json = (body: unknown) => {
    if (
      body !== null &&
      typeof body === "object" &&
      typeof (body as { error_description?: unknown }).error_description === "string"
    ) {
      const fields = body as { error_description: string };
      return json({ ...fields, error_description: oauthDescription(fields.error_description) });
    }
    return json(body);
  };
  const redirect = res.redirect.bind(res) as (status: number, url: string) => void;
  res.redirect = ((status: number | string, url?: string | number) => {
    const [code, target] =
      typeof status === "number" ? [status, String(url)] : [typeof url === "number" ? url : 302, status];
    let location = target;
    try {
      const parsed = new URL(target);
      const description = parsed.searchParams.get("error_description");
      if (description !== null) {
        parsed.searchParams.set("error_description", oauthDescription(description));
        // RFC 6749, 4.1.2.1: the error carries the request's state. The SDK leaves it out when the refused
        // parameters are the ones it reads the state with.
        const sent = (req.method === "POST" ? (req.body as Record<string, unknown> | undefined) : req.query)?.state;
        if (!parsed.searchParams.has("state") && typeof sent === "string" && sent !== "")
          parsed.searchParams.set("state", sent);
        location = parsed.href;
      }
    } catch {
      // A relative URL: none of ours carries an error.
    }
    redirect(code, location);
  }) as typeof res.redirect;
  next();
};

/** Text that cannot be stored, shown without the character itself (a NUL has no place in a page or a log). */
const printable = (text: string) => text.replace(/\u0000|[\ud800-\udfff]/gu, "\ufffd");

/**
 * Refuses a parsed body holding text PostgreSQL cannot store (storable-text.ts), whichever parser reads it.
 * The SDK's routers parse their bodies and hand them straight to their handlers, so the check sits on
 * req.body itself: a body parser catches what its assignment throws and passes it on as the request's error.
 */
export const refuseUnstorableBodies: RequestHandler = (req, _res, next) => {
  let body: unknown;
  // The body's bytes as its parser reads them: body-parser decodes leniently (U+FFFD for bytes, and for a
  // form's escapes, that are not UTF-8), so the bytes themselves are checked once the body is parsed.
  const chunks: Buffer[] = [];
  const emit = req.emit;
  req.emit = function (this: unknown, event: string | symbol, ...args: unknown[]) {
    if (event === "data" && (Buffer.isBuffer(args[0]) || typeof args[0] === "string"))
      chunks.push(Buffer.from(args[0] as Buffer));
    return emit.call(this, event, ...args);
  } as typeof req.emit;
  Object.defineProperty(req, "body", {
    configurable: true,
    enumerable: true,
    get: () => body,
    set(value: unknown) {
      if (chunks.length > 0) {
        try {
          const text = decodeUtf8(Buffer.concat(chunks), "The body");
          if (req.is("application/x-www-form-urlencoded") && !percentEscapesAreUtf8(text))
            throw invalidEncodingError("The form");
        } catch (error) {
          throw new BodyError(400, "entity.encoding.invalid", (error as Error).message);
        }
      }
      const [problem] = Buffer.isBuffer(value) ? [] : unstorableText(value, 1);
      if (problem)
        throw new BodyError(
          400,
          "entity.unstorable",
          problem.path ? `${printable(problem.path)}: ${problem.message}` : `The body ${problem.message}`,
        );
      body = value;
    },
  });
  next();
};

/** 415 for a POST whose body is not of `type` (a request without a body passes: there is nothing to parse). */
export function requireBodyType(type: "application/json" | "application/x-www-form-urlencoded"): RequestHandler {
  return (req, _res, next) => {
    const length = req.headers["content-length"];
    const hasBody = req.headers["transfer-encoding"] !== undefined || (length !== undefined && length !== "0");
    if (req.method !== "POST" || !hasBody || req.is(type)) return next();
    next(new BodyError(415, "entity.type.unsupported", `Send the body as ${type}`));
  };
}

/**
 * The express app's last handler. Client errors get their 4xx in the endpoint's shape: the sign-in pages an
 * HTML page, /mcp the JSON-RPC error object its transport answers for a bad body (`{ jsonrpc, error: { code,
 * message }, id: null }`), the OAuth endpoints `{ error, error_description }` (RFC 6749, 5.2; RFC 7591, 3.2.2).
 */
export function mcpErrorHandler(logger: Logger): ErrorRequestHandler {
  return (error, req, res, _next) => {
    const known = clientErrorOf(error);
    if (!known) logger.error({ err: error }, "mcp surface error");
    if (res.headersSent) return;
    const surface = surfaceOf(req);
    if (surface === "page") {
      const message = known ? known.description : "Something went wrong on our side. Start again from your MCP client.";
      res
        .status(known?.status ?? 500)
        .type("html")
        .set(PAGE_HEADERS)
        .send(errorPage(message));
    } else if (surface === "mcp") {
      if (!known)
        res
          .status(500)
          .json({ jsonrpc: "2.0", error: { code: INTERNAL_ERROR, message: internalRpcError().message }, id: null });
      else
        res
          .status(known.status)
          .json({ jsonrpc: "2.0", error: { code: known.rpcCode, message: known.description }, id: null });
    } else if (!known) {
      res
        .status(500)
        .set("Cache-Control", "no-store")
        .json(new ServerError("Internal Server Error").toResponseObject());
    } else {
      // A registration's bad text is bad client metadata (RFC 7591); anywhere else a bad request.
      const registration = (req.originalUrl.split("?")[0] ?? "").replace(/\/+$/, "") === "/register";
      const code =
        registration && (error as { type?: unknown }).type === "entity.unstorable"
          ? "invalid_client_metadata"
          : known.code;
      res
        .status(known.status)
        .set("Cache-Control", "no-store")
        .json({ error: code, error_description: known.description });
    }
  };
}
