import type { Tenancy } from "../kernel/tenancy.js";
import { parseJsonExact, stringifyJson } from "../../platform/exact-json.js";
import { requireScope } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import { ConflictError, NotFoundError } from "../kernel/errors.js";
import { isUuid, newId } from "../kernel/ids.js";
import { addDays } from "../kernel/billing-period.js";
import { toJsonDecimal, toJsonMoney } from "../kernel/money.js";
import type { DeliveryEngine } from "./delivery-engine.js";
import { buildEnvelope, type EventType } from "./outbox.js";
import { findOwnEndpoint } from "./webhook-endpoints.js";
import * as repo from "./webhook-repository.js";
import type { Delivery } from "./webhook-schemas.js";

/** The deliveries list shows this many, newest first (docs/webhooks.md, "Delivery rules"). */
const RECENT_DELIVERIES = 50;

function presentDelivery(row: repo.DeliveryRow): Delivery {
  return {
    object: "webhook_delivery",
    id: row.id,
    endpoint_id: row.endpoint_id,
    event_id: row.event_id,
    event_type: row.event_type as EventType,
    status: row.status,
    attempts: row.attempts,
    last_status_code: row.last_status_code,
    last_error: row.last_error,
    next_attempt_at: row.status === "pending" && row.next_attempt_at ? row.next_attempt_at.toISOString() : null,
    delivered_at: row.delivered_at ? row.delivered_at.toISOString() : null,
    created_at: row.created_at.toISOString(),
    test: row.test,
    payload: parseJsonExact(row.payload) as Record<string, unknown>,
  };
}

const SAMPLE_CUSTOMER_ID = "00000000-0000-4000-8000-000000000000";

/**
 * SAMPLE data for a test event of an invoice type: an invoice with its lines shaped as
 * `GET /v1/billing/invoices/{number}` answers it, in the status the event announces. Not a stored invoice.
 */
function sampleInvoice(type: "invoice.issued" | "invoice.paid" | "invoice.voided", now: Date) {
  const today = now.toISOString().slice(0, 10);
  const money = (amount: string) => toJsonMoney(amount, "USD");
  return {
    object: "invoice",
    number: "INV-000000",
    contract: "sample-customer-inc-test",
    customer: "00000000-0000-4000-8000-000000000000",
    customer_name: "Sample Customer Inc.",
    status: type === "invoice.issued" ? "issued" : type === "invoice.paid" ? "paid" : "void",
    subtotal: money("1000.00"),
    tax: money("0.00"),
    total: money("1000.00"),
    amount_paid: money(type === "invoice.paid" ? "1000.00" : "0.00"),
    amount_credited: money("0.00"),
    amount_due: money(type === "invoice.issued" ? "1000.00" : "0.00"),
    // Only a draft has projected figures: an invoice that events announce is issued.
    projected: null,
    currency: "USD",
    billing_period: { start: `${today.slice(0, 7)}-01`, end: today },
    reissue_of: null,
    reissued_as: null,
    issued_date: today,
    due_date: addDays(today, 30),
    paid_date: type === "invoice.paid" ? today : null,
    hosted_url: "https://billing.example/i/sample-hosted-invoice-token",
    metrics: ["domestic_wire"],
    line_items: [
      {
        description: "Domestic wire",
        quantity: toJsonDecimal("42"),
        unit_price: toJsonDecimal("20"),
        amount: money("840.00"),
        kind: "usage",
        rule_id: "00000000-0000-4000-8000-000000000001",
        metric: "domestic_wire",
      },
      {
        description: "Monthly minimum",
        quantity: toJsonDecimal("1"),
        unit_price: toJsonDecimal("160"),
        amount: money("160.00"),
        kind: "minimum",
        rule_id: "00000000-0000-4000-8000-000000000002",
        metric: null,
      },
    ],
    created_at: now.toISOString(),
    updated_at: now.toISOString(),
    payments:
      type === "invoice.paid"
        ? [
            {
              object: "invoice_payment",
              id: "pay_0123456789abcdef",
              invoice: "INV-000000",
              amount: money("1000.00"),
              currency: "USD",
              paid_on: today,
              method: "bank_transfer",
              reference: null,
              created_at: now.toISOString(),
            },
          ]
        : [],
  };
}

/**
 * Sample objects for test events (docs/webhooks.md, "Delivery rules": sample data, signed like real ones).
 * Every one is SAMPLE data, sent only in events marked `test: true`: none is a stored resource.
 */
function sampleObject(type: EventType, now: Date): unknown {
  const createdAt = now.toISOString();
  if (type === "invoice.issued" || type === "invoice.paid" || type === "invoice.voided") {
    return sampleInvoice(type, now);
  }
  if (type === "invoice.payment_recorded") {
    // SAMPLE payment of an invoice (the shape the payments of an invoice record with this event).
    return {
      object: "invoice_payment",
      id: "pay_0123456789abcdef",
      invoice: "INV-000001",
      amount: toJsonMoney("100.00", "USD"),
      currency: "USD",
      paid_on: "2026-03-15",
      method: "bank_transfer",
      reference: null,
      created_at: createdAt,
    };
  }
  if (type === "credit_note.created") {
    // SAMPLE credit note of an invoice (the shape credit notes record with this event).
    return {
      object: "credit_note",
      number: "CN-000001",
      invoice: "INV-000001",
      customer: SAMPLE_CUSTOMER_ID,
      currency: "USD",
      amount: toJsonMoney("10.00", "USD"),
      applied_to_due: toJsonMoney("10.00", "USD"),
      to_balance: toJsonMoney("0.00", "USD"),
      reason: "Sample credit note: a goodwill credit",
      lines: [{ line: null, description: "Credit on the invoice", amount: toJsonMoney("10.00", "USD") }],
      issued_date: createdAt.slice(0, 10),
      created_at: createdAt,
    };
  }
  if (type === "customer.created") {
    return {
      object: "customer",
      id: SAMPLE_CUSTOMER_ID,
      name: "Sample Customer Inc.",
      external_id: "sample-customer",
      email: "billing@sample.example",
      domain: "sample.example",
      country: "US",
      address: null,
      registration_number: null,
      payment_terms_days: 30,
      payment_terms: "Net 30",
      tax_id: null,
      invoice_memo: null,
      invoice_delivery: "none",
      credit_balances: [],
      created_at: createdAt,
      updated_at: null,
    };
  }
  return {
    object: "contract",
    id: "sample-customer-inc-test",
    customer_id: SAMPLE_CUSTOMER_ID,
    customer_name: "Sample Customer Inc.",
    contract_number: "CTR-000000",
    status: "active",
    start_date: createdAt.slice(0, 10),
    end_date: null,
    currency: "USD",
    billing_cadence: "monthly",
    metrics: ["domestic_wire", "international_wire"],
    pdf_url: "https://billing.example/v1/agreements/sample.pdf",
    sample: true,
    payment_terms_days: null,
    created_at: createdAt,
  };
}

/** A company's deliveries as it sees them: listed, read, resent; and a test event sent to an endpoint. */
export function createWebhookDeliveries({ clock, engine }: { clock: Clock; engine: DeliveryEngine }) {
  return {
    /** Sends a signed test event (test: true, sample data) now, and records it as a delivery. */
    async sendTest(tenant: Tenancy, id: string, type: EventType) {
      requireScope(tenant, "webhooks:write");
      const endpoint = await findOwnEndpoint(tenant, id);
      if (!endpoint.enabled) throw new ConflictError("The endpoint is disabled; enable it first", "endpoint_disabled");
      const now = clock.now();
      const envelope = buildEnvelope(type, sampleObject(type, now), now, true);
      const deliveryId = newId();
      await repo.insertDelivery(tenant.data, {
        company_id: tenant.companyId,
        id: deliveryId,
        endpoint_id: endpoint.id,
        event_id: envelope.id,
        event_type: type,
        payload: stringifyJson(envelope),
        test: true,
        status: "pending",
        attempts: 0,
        last_status_code: null,
        last_error: null,
        next_attempt_at: null,
        delivered_at: null,
        created_at: now,
      });
      const delivery = await engine.manualAttempt(tenant.data, deliveryId, endpoint);
      return {
        object: "webhook_test" as const,
        id: delivery.id,
        event_id: delivery.event_id,
        status: delivery.status as "succeeded" | "failed",
        status_code: delivery.last_status_code,
        error: delivery.last_error,
      };
    },

    async recentDeliveries(tenant: Tenancy, endpointId: string): Promise<Delivery[]> {
      requireScope(tenant, "webhooks:read", "webhooks:write");
      const endpoint = await findOwnEndpoint(tenant, endpointId);
      return (await repo.listRecentDeliveries(tenant.data, endpoint.id, RECENT_DELIVERIES)).map(presentDelivery);
    },

    /** One delivery with its payload (dashboard delivery page), even when older than the recent list shows. */
    async getDelivery(tenant: Tenancy, deliveryId: string): Promise<Delivery> {
      requireScope(tenant, "webhooks:read", "webhooks:write");
      const row = isUuid(deliveryId) ? await repo.findDelivery(tenant.data, deliveryId) : undefined;
      if (!row) throw new NotFoundError("webhook_delivery");
      return presentDelivery(row);
    },

    /** The company's failing deliveries across endpoints (dashboard overview), newest first. */
    async failingDeliveries(tenant: Tenancy, limit = 10): Promise<Delivery[]> {
      requireScope(tenant, "webhooks:read", "webhooks:write");
      return (await repo.listFailingDeliveries(tenant.data, Math.min(Math.max(limit, 1), 100))).map(presentDelivery);
    },

    /** Sends the same event again (same id and body), now, as one more attempt. */
    async resend(tenant: Tenancy, deliveryId: string): Promise<Delivery> {
      requireScope(tenant, "webhooks:write");
      const delivery = isUuid(deliveryId) ? await repo.findDelivery(tenant.data, deliveryId) : undefined;
      if (!delivery) throw new NotFoundError("webhook_delivery");
      const endpoint = (await repo.findEndpoint(tenant.data, delivery.endpoint_id))!;
      if (!endpoint.enabled) throw new ConflictError("The endpoint is disabled; enable it first", "endpoint_disabled");
      return presentDelivery(await engine.manualAttempt(tenant.data, delivery.id, endpoint));
    },
  };
}
