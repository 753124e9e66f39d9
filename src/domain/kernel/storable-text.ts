import { ValidationError } from "./errors.js";

/**
 * PostgreSQL keeps text as UTF-8 and has no NUL. A JavaScript string can hold both a NUL and an unpaired
 * UTF-16 surrogate (JSON's "\ud800"): the driver would turn the surrogate into U+FFFD, so that two different
 * ids or names became the same stored value, and jsonb refuses it outright (a 500). Requests carrying either
 * are refused instead, wherever the string sits.
 */
const LONE_SURROGATE = /[\ud800-\udfff]/u; // with the u flag, only unpaired halves match

export interface TextProblem {
  /** Dotted path of the string (or of the key) in the value. */
  path: string;
  message: string;
}

export const NUL_MESSAGE = "must not contain NUL characters";
export const SURROGATE_MESSAGE = "must be valid Unicode: an unpaired surrogate such as \\ud800 cannot be stored";

/** Why `text` cannot be stored as PostgreSQL text, or undefined when it can. */
export function unstorableReason(text: string): string | undefined {
  if (text.includes("\u0000")) return NUL_MESSAGE;
  if (LONE_SURROGATE.test(text)) return SURROGATE_MESSAGE;
  return undefined;
}

/** Whether JSON text may hold such a string: a `\u0000` escape or a surrogate escape (a cheap test first). */
export const mayHoldUnstorableText = (json: string): boolean => /\\u(?:0000|[dD][89a-fA-F])/.test(json);

interface Frame {
  value: unknown;
  key: string;
  parent: Frame | undefined;
}

function pathOf(frame: Frame): string {
  const keys: string[] = [];
  for (let f: Frame | undefined = frame; f?.parent; f = f.parent) keys.push(f.key);
  return keys.reverse().join(".");
}

/**
 * The strings and keys of a parsed JSON value that cannot be stored (at most `limit` of them). Iterative:
 * a body may nest far deeper than the call stack.
 */
export function unstorableText(value: unknown, limit = 10): TextProblem[] {
  const found: TextProblem[] = [];
  const stack: Frame[] = [{ value, key: "", parent: undefined }];
  while (stack.length > 0 && found.length < limit) {
    const frame = stack.pop()!;
    const keyReason = frame.parent ? unstorableReason(frame.key) : undefined;
    if (keyReason) found.push({ path: pathOf(frame), message: keyReason });
    if (typeof frame.value === "string") {
      const reason = unstorableReason(frame.value);
      if (reason && found.length < limit) found.push({ path: pathOf(frame), message: reason });
    } else if (frame.value !== null && typeof frame.value === "object") {
      const entries = Object.entries(frame.value);
      // pushed last to first, so that they come off the stack in document order
      for (let i = entries.length - 1; i >= 0; i--)
        stack.push({ value: entries[i]![1], key: entries[i]![0], parent: frame });
    }
  }
  return found;
}

/**
 * The refusal of a parsed request that holds text PostgreSQL cannot store, or undefined: one wording and one
 * code (invalid_request) for every surface that takes JSON (the HTTP API, the MCP tools).
 */
export function unstorableTextError(value: unknown): ValidationError | undefined {
  const problems = unstorableText(value);
  if (problems.length === 0) return undefined;
  return new ValidationError(
    `Invalid request. ${problems[0]!.path}: ${problems[0]!.message}`,
    "invalid_request",
    problems,
  );
}

// Bytes that are not UTF-8 (an overlong form, a lone continuation byte, a truncated sequence, an encoded
// surrogate half, 0xFF) have no text to store: a lenient decoder makes each U+FFFD, so that what was sent
// and what is kept differ without anyone being told. Every surface that takes text decodes it here, and
// refuses such bytes with 400 `invalid_encoding`.
const STRICT_UTF8 = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

const INVALID_ENCODING = "invalid_encoding";

/** The error every surface answers for bytes that are not UTF-8; `what` names them ("The body", "The field `terms`"). */
export const invalidEncodingError = (what: string) =>
  new ValidationError(`${what} is not valid UTF-8 text`, INVALID_ENCODING);

/** The text of UTF-8 bytes; throws invalidEncodingError(what) when they are not UTF-8. */
export function decodeUtf8(bytes: Uint8Array, what: string): string {
  try {
    return STRICT_UTF8.decode(bytes);
  } catch {
    throw invalidEncodingError(what);
  }
}

/**
 * Whether the bytes that `%XX` escapes stand for are UTF-8 (a URL's path or query, a form body), read one run
 * of escapes at a time, as decodeURIComponent does; `+` and plain characters are left as they are.
 */
export function percentEscapesAreUtf8(text: string): boolean {
  if (!text.includes("%")) return true;
  const runs = text.match(/(?:%[0-9a-fA-F]{2})+/g) ?? [];
  for (const run of runs) {
    const bytes = Uint8Array.from(run.slice(1).split("%"), (hex) => parseInt(hex, 16));
    try {
      STRICT_UTF8.decode(bytes);
    } catch {
      return false;
    }
  }
  return true;
}
