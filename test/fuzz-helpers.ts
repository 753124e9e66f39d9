/** What the fuzz suites share: the odd characters they mix into strings, and a digest of a company's data. */
import type { TestApp } from "./harness.js";

/** Characters that tend to break things: bidi and zero-width marks, lone surrogates, controls, quotes. */
export const ODD_CHARS = [
  "\u202e", "\u202d", "\u200f", "\u200e", "\u061c", "\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u2028",
  "\u2029", "\u0085", "\u00a0", "\u3000", "\u0301", "\u20e3", "\ud800", "\udbff", "\udc00", "\udfff",
  "\ud83d\ude00", "\ud83d", "\ude00", "\u0000", "\u0007", "\u0008", "\u001b", "\u007f", "\u009f", "\uffff",
  "\ufffe", "\ufffd", "'", '"', "\\", "`", "%", "%00", "%s", "${x}", "{{x}}", "<script>", "' OR 1=1 --",
  "\n", "\r\n", "\t", " ", "\ud835\udfd8", "\ufdfa", "\u0130", "\u00df", "\u0627\u0644\u0639\u0631\u0628\u064a\u0629",
  "\u05e2\u05d1\u05e8\u05d9\u05ea", "Z\u0351\u036b\u0343\u036a\u0302\u036b\u033d\u034f", "NaN", "null", "undefined",
];

/** Row counts and digests of everything a company has stored: equal before and after = nothing written. */
export async function storedState(t: TestApp, companyId: string): Promise<string> {
  const count = (table: string) => `(SELECT count(*) FROM ${table} WHERE company_id = $1) AS ${table}`;
  const { rows } = await t.app.db.query(
    `SELECT ${["customers", "contracts", "pricing_program_versions", "usage_events", "invoices", "invoice_lines", "webhook_endpoints", "webhook_deliveries", "events", "company_counters"].map(count).join(", ")},
       (SELECT md5(coalesce(string_agg(concat_ws('|', id, url, description, array_to_string(events, ','), enabled, secret), ';' ORDER BY id), ''))
          FROM webhook_endpoints WHERE company_id = $1) AS endpoints_digest,
       (SELECT md5(coalesce(string_agg(concat_ws('|', number, total, minimum_amount, projected_at, updated_at), ';' ORDER BY number), ''))
          FROM invoices WHERE company_id = $1) AS invoices_digest,
       (SELECT md5(coalesce(string_agg(concat_ws('|', invoice_number, line_key, quantity, amount), ';' ORDER BY invoice_number, line_key), ''))
          FROM invoice_lines WHERE company_id = $1) AS lines_digest,
       (SELECT md5(coalesce(string_agg(concat_ws('|', id, status, current_version), ';' ORDER BY id), ''))
          FROM contracts WHERE company_id = $1) AS contracts_digest,
       (SELECT md5(coalesce(string_agg(concat_ws('|', id, status, attempts, next_attempt_at), ';' ORDER BY id), ''))
          FROM webhook_deliveries WHERE company_id = $1) AS deliveries_digest,
       (SELECT md5(coalesce(string_agg(concat_ws('=', name, value), ';' ORDER BY name), ''))
          FROM company_counters WHERE company_id = $1) AS counters_digest`,
    [companyId],
  );
  return JSON.stringify(rows[0]);
}
