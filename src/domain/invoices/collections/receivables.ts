import type { Tenancy } from "../../kernel/tenancy.js";
import { requireScope } from "../../kernel/actor.js";
import { toDateString } from "../../kernel/billing-period.js";
import type { Clock } from "../../kernel/clock.js";
import { Big, toJsonMoney } from "../../kernel/money.js";
import { amountDue } from "../invoice-amounts.js";
import * as repo from "../invoice-read-repository.js";
import { AGING_BUCKETS, type AgingBucket, type ReceivablesReport, type ReceivablesRow } from "../invoice-schemas.js";

/** Issued invoices read per statement: the report reads them all, a page at a time, never one by one. */
const RECEIVABLES_PAGE = 1000;

const DAY_MS = 86_400_000;

/** Whole days from `dueDate` to `today` (both YYYY-MM-DD, UTC): 0 on the due date, negative before it. */
export function daysPastDue(dueDate: string, today: string): number {
  return Math.round((Date.parse(`${today}T00:00:00Z`) - Date.parse(`${dueDate}T00:00:00Z`)) / DAY_MS);
}

/**
 * The aging bucket of an invoice `days` past due: `current` until and on its due date, then 1–30, 31–60,
 * 61–90 and over 90 days past due.
 */
export function agingBucketOf(days: number): AgingBucket {
  if (days <= 0) return "current";
  if (days <= 30) return "1_30";
  if (days <= 60) return "31_60";
  if (days <= 90) return "61_90";
  return "over_90";
}

interface Sums {
  buckets: Record<AgingBucket, Big>;
  total: Big;
  invoices: number;
}

const emptySums = (): Sums => ({
  buckets: Object.fromEntries(AGING_BUCKETS.map((b) => [b, new Big(0)])) as Record<AgingBucket, Big>,
  total: new Big(0),
  invoices: 0,
});

function addTo(sums: Sums, bucket: AgingBucket, due: Big): void {
  sums.buckets[bucket] = sums.buckets[bucket].plus(due);
  sums.total = sums.total.plus(due);
  sums.invoices += 1;
}

const moneyOf = (sums: Sums, currency: string) => ({
  ...(Object.fromEntries(AGING_BUCKETS.map((b) => [b, toJsonMoney(sums.buckets[b], currency)])) as Record<
    AgingBucket,
    ReturnType<typeof toJsonMoney>
  >),
  total: toJsonMoney(sums.total, currency),
  invoices: sums.invoices,
});

const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/**
 * Accounts receivable aging (GET /v1/billing/reports/receivables): what the company's issued invoices still
 * owe (`amountDue`, exact), per customer and currency, by days past due at today (UTC, the service's clock);
 * and the same per currency. Invoices that owe nothing are left out.
 */
export function createReceivables({ clock }: { clock: Clock }) {
  return async function receivables(tenant: Tenancy, filter: { currency?: string | undefined } = {}) {
    requireScope(tenant, "invoices:read");
    const today = toDateString(clock.now());
    const rows = new Map<string, { customer: string; customer_name: string; currency: string; sums: Sums }>();
    const totals = new Map<string, Sums>();
    for (let after: string | null = null; ; ) {
      const page = await repo.listReceivableInvoices(tenant.data, filter.currency ?? null, after, RECEIVABLES_PAGE);
      for (const invoice of page) {
        const due = amountDue(invoice);
        if (due.lte(0)) continue;
        const bucket = agingBucketOf(daysPastDue(invoice.due_date, today));
        const key = `${invoice.customer_id}\u0000${invoice.currency}`;
        let row = rows.get(key);
        if (!row) {
          row = {
            customer: invoice.customer_id,
            customer_name: invoice.customer_name,
            currency: invoice.currency,
            sums: emptySums(),
          };
          rows.set(key, row);
        }
        addTo(row.sums, bucket, due);
        const total = totals.get(invoice.currency) ?? emptySums();
        addTo(total, bucket, due);
        totals.set(invoice.currency, total);
      }
      if (page.length < RECEIVABLES_PAGE) break;
      after = page[page.length - 1]!.seq;
    }
    const data: ReceivablesRow[] = [...rows.values()]
      .sort(
        (a, b) =>
          byText(a.customer_name, b.customer_name) || byText(a.customer, b.customer) || byText(a.currency, b.currency),
      )
      .map((r) => ({
        customer: r.customer,
        customer_name: r.customer_name,
        currency: r.currency,
        ...moneyOf(r.sums, r.currency),
      }));
    const report: ReceivablesReport = {
      object: "receivables_report",
      as_of: today,
      data,
      totals: [...totals.entries()]
        .sort(([a], [b]) => byText(a, b))
        .map(([currency, sums]) => ({ currency, ...moneyOf(sums, currency) })),
    };
    return report;
  };
}
