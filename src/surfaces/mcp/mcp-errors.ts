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

/** A zod issue, as much of it as the sentence reads (zod 4's issue shapes). */
interface ArgumentIssue {
  code: string;
  path: readonly PropertyKey[];
  message: string;
  expected?: unknown;
  origin?: unknown;
  minimum?: unknown;
  maximum?: unknown;
  inclusive?: boolean;
  keys?: readonly string[];
  values?: readonly unknown[];
  format?: unknown;
}

/** zod's own wording ("Invalid input: expected string, received number"): rewritten; a schema's own message is kept. */
const ZOD_WORDING = /^(Invalid|Too (small|big)|Unrecognized key)/;
const article = (noun: string) => (/^[aeiou]/.test(noun) ? `an ${noun}` : `a ${noun}`);
const TYPE_WORDS: Record<string, string> = {
  int: "an integer",
  boolean: "true or false",
  record: "an object",
  nan: "a number",
};
const FORMAT_WORDS: Record<string, string> = {
  url: "a URL",
  uri: "a URI",
  email: "an email address",
  datetime: "a date and time in ISO 8601 with a time zone",
  date: "a date as YYYY-MM-DD",
  regex: "text of the form the field takes",
};
const items = (count: unknown, unit: string) => `${String(count)} ${unit}${count === 1 ? "" : "s"}`;

function lengthWords(origin: unknown, bound: unknown, least: boolean): string {
  const side = least ? "at least" : "at most";
  if (origin === "string")
    return least && bound === 1 ? "must not be empty" : `must be ${side} ${items(bound, "character")}`;
  if (origin === "array" || origin === "set")
    return least && bound === 1 ? "must hold at least one item" : `must hold ${side} ${items(bound, "item")}`;
  return `must be ${side} ${String(bound)}`;
}

/** What is wrong with one argument, in words that follow its name ("must not be empty"). */
function issueWords(issue: ArgumentIssue, name: string): string {
  // A schema's own message ("quantity must be a decimal number such as 12.5") may start with the name.
  if (!ZOD_WORDING.test(issue.message))
    return issue.message.startsWith(`${name} `) ? issue.message.slice(name.length + 1) : issue.message;
  switch (issue.code) {
    case "invalid_type":
      return `must be ${TYPE_WORDS[String(issue.expected)] ?? article(String(issue.expected))}`;
    case "too_small":
      return lengthWords(issue.origin, issue.minimum, true);
    case "too_big":
      return lengthWords(issue.origin, issue.maximum, false);
    case "invalid_value": {
      const values = (issue.values ?? []).map((v) => JSON.stringify(v));
      return values.length === 1 ? `must be ${values[0]}` : `must be one of ${values.join(", ")}`;
    }
    case "invalid_format":
      return `must be ${FORMAT_WORDS[String(issue.format)] ?? `a valid ${String(issue.format ?? "value")}`}`;
    case "invalid_union":
      return "matches none of the shapes this argument takes";
    default:
      return "is not valid";
  }
}

const valueAt = (args: unknown, path: readonly PropertyKey[]): unknown =>
  path.reduce<unknown>(
    (value, key) =>
      value !== null && typeof value === "object" ? (value as Record<PropertyKey, unknown>)[key] : undefined,
    args,
  );

/**
 * Validation issues as one clause that names the field ("quantity: must be a decimal …",
 * "external_contract_id is required"), and how many other problems there are: what a developer or an agent
 * needs to fix the request, instead of the validator's list of issues. `input`, when known, tells a
 * missing field from one of the wrong type.
 */
function issuesSentence(issues: readonly ArgumentIssue[], input?: unknown): string {
  const [first] = issues;
  if (first === undefined) return "the request is not valid";
  const name = first.path.map(String).join(".");
  const missing =
    first.code === "invalid_type" &&
    name !== "" &&
    (/received undefined$/.test(first.message) || (input !== undefined && valueAt(input, first.path) === undefined));
  let problem: string;
  if (first.code === "unrecognized_keys") {
    const keys = (first.keys ?? []).map((key) => (name ? `${name}.${key}` : key));
    problem = `unknown argument${keys.length === 1 ? "" : "s"} ${keys.join(", ")}`;
  } else if (missing) {
    problem = `${name} is required`;
  } else {
    problem = `${name === "" ? "the arguments" : name}: ${issueWords(first, String(first.path.at(-1) ?? ""))}`;
  }
  const more = issues.length - 1;
  return `${problem}${more > 0 ? ` (and ${more} more problem${more === 1 ? "" : "s"})` : ""}`;
}

/** A refusal of a tool's arguments: which tool, and issuesSentence. */
export function argumentsProblem(tool: string, issues: readonly ArgumentIssue[], args: unknown): string {
  return `Invalid arguments for ${tool}: ${issuesSentence(issues, args)}`;
}

/**
 * An OAuth error_description as a sentence. The SDK's OAuth handlers describe a refused request with their
 * validator's output (a JSON list of issues, sometimes behind "ZodError: "): that becomes issuesSentence;
 * any other JSON, a plain sentence; a sentence stays as it is.
 */
export function oauthDescription(description: string): string {
  const text = description.replace(/^ZodError:\s*/, "").trim();
  if (!/^[[{]/.test(text)) return description;
  let issues: unknown;
  try {
    issues = JSON.parse(text);
  } catch {
    return "The request's parameters are not valid";
  }
  const valid =
    Array.isArray(issues) &&
    issues.every(
      (i) =>
        i !== null &&
        typeof i === "object" &&
        typeof i.code === "string" &&
        Array.isArray(i.path) &&
        typeof i.message === "string",
    );
  if (!valid) return "The request's parameters are not valid";
  const sentence = issuesSentence(issues as ArgumentIssue[])
    .replace(/^unknown argument/, "unknown parameter")
    .replace(/^the arguments/, "the request");
  return sentence;
}

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

/**
 * What is wrong with a tools/call request's params, or undefined: the SDK's own check of them would answer
 * a malformed call as an internal error with its validator's output.
 */
export function toolCallProblem(params: unknown): string | undefined {
  const isObject = (value: unknown) => value !== null && typeof value === "object" && !Array.isArray(value);
  if (!isObject(params)) return "Invalid params: tools/call takes an object with the tool's name and its arguments";
  const { name, arguments: args, _meta: meta, task } = params as Record<string, unknown>;
  if (typeof name !== "string" || name === "") return "Invalid params: name is required: the name of the tool to call";
  if (args !== undefined && !isObject(args))
    return "Invalid params: arguments must be an object of the tool's arguments by name";
  if (meta !== undefined && !isObject(meta)) return "Invalid params: _meta must be an object";
  if (task !== undefined && !isObject(task)) return "Invalid params: task must be an object";
  return undefined;
}

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
