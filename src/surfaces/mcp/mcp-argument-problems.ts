/**
 * What is wrong with a request to the agent surface, as one sentence a developer or an agent can act on: it
 * names the field and what it must be ("quantity: must be a decimal …", "external_contract_id is required"),
 * and how many other problems there are, instead of a validator's list of issues. For a tool's arguments
 * (argumentsProblem), a tools/call's params (toolCallProblem) and the OAuth endpoints' error_description
 * (oauthDescription); mcp-tools.ts and mcp-errors.ts answer with them.
 */

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
