// `billing usage send FILE`: usage events from a file to a running service, through the API's typed client
// (src/client): for a backfill, or for a service whose embedded database this process may not open. The
// file is JSON Lines (an event per line), a JSON array of events, or `{"events": [...]}`; `-` reads stdin.
// Numbers keep their exact text from the file to the wire (exact-json.ts). Events go 100 to a request, in
// order; the service's answers are idempotent per event_id, so sending a file twice stores nothing twice.
import { readFile } from "node:fs/promises";
import { createBillingClient, type paths } from "../../client/billing-client.js";
import { parseJsonExact } from "../../platform/exact-json.js";

type SubmitBody = paths["/v1/billing/usage"]["post"]["requestBody"]["content"]["application/json"];
const BATCH = 100;

export class UsageFileError extends Error {}

/** The events of a file's text: JSON Lines, an array, or `{"events": [...]}`. */
export function eventsOf(text: string): unknown[] {
  const trimmed = text.trim();
  if (trimmed === "") return [];
  if (trimmed.startsWith("[") || trimmed.startsWith("{")) {
    try {
      const value = parseJsonExact(trimmed) as unknown;
      if (Array.isArray(value)) return value;
      if (value && typeof value === "object" && Array.isArray((value as { events?: unknown }).events))
        return (value as { events: unknown[] }).events;
      if (value && typeof value === "object" && !trimmed.includes("\n")) return [value];
    } catch {
      // not one JSON value: JSON Lines, below
    }
  }
  return trimmed.split("\n").flatMap((line, index) => {
    if (line.trim() === "") return [];
    try {
      return [parseJsonExact(line) as unknown];
    } catch {
      throw new UsageFileError(`line ${index + 1} is not JSON`);
    }
  });
}

export interface SendReport {
  object: "usage_send";
  sent: number;
  accepted: number;
  duplicates: number;
  rejected: number;
  rejections: { event_id: string | null; code: string; message: string }[];
}

export async function sendUsage(options: { file: string; baseUrl: string; apiKey: string }): Promise<SendReport> {
  const text = options.file === "-" ? await readStdin() : await readFile(options.file, "utf8");
  const events = eventsOf(text);
  const client = createBillingClient({ baseUrl: options.baseUrl, apiKey: options.apiKey });
  const report: SendReport = { object: "usage_send", sent: 0, accepted: 0, duplicates: 0, rejected: 0, rejections: [] };
  for (let start = 0; start < events.length; start += BATCH) {
    const batch = events.slice(start, start + BATCH);
    const { data, error, response } = await client.POST("/v1/billing/usage", { body: { events: batch } as SubmitBody });
    if (error) throw new ApiAnswerError(response.status, error.code, error.error, report);
    report.sent += batch.length;
    report.accepted += data.accepted;
    report.rejected += data.rejected;
    for (const event of data.events) {
      if (event.duplicate) report.duplicates += 1;
      if (event.error)
        report.rejections.push({ event_id: event.event_id, code: event.error.code, message: event.error.message });
    }
  }
  return report;
}

/** The service refused a request as a whole: its status, `code` and sentence, and what was sent before it. */
export class ApiAnswerError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly sentSoFar: SendReport,
  ) {
    super(message);
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}
