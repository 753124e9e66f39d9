import { isDeepStrictEqual } from "node:util";
import type { Queryable } from "../../db/database.js";
import { billRecords, figuresOnly, freezeBill } from "../invoices/invoice-figures.js";
import * as repo from "./invariants-repository.js";

export interface VerifyReport {
  ok: boolean;
  events: number;
  ratedTotal: string;
  problems: string[];
}

/**
 * Checks the invariants over the stored data (one company, or all with null): every event on exactly one
 * line of its own contract's invoice for its month, which holds its timestamp, whose exact sums match its events; no rule's capped
 * charges above its monthly cap; program versions 1..current without gaps; every event delivered (or queued) to each endpoint subscribed when it happened, and no delivery
 * without its event. A draft stores no rounded figure (amounts, fee unit prices, the minimum true-up and the
 * totals are derived when it is read, by invoice-figures.ts), so there is none to drift from its lines; an
 * issued, paid or void invoice keeps the figures it was issued with, which must still be what its lines
 * bill, and no event may have been stored on it after it was issued; an uploaded agreement still has the
 * SHA-256 it was uploaded with; a credit grant's balance is the sum of its ledger, each credit line is what its
 * grant burned on that invoice, and no invoice's credits exceed its usage.
 */
export async function verifyBilling(db: Queryable, companyId: string | null = null): Promise<VerifyReport> {
  const problems: string[] = [];
  for (const m of await repo.findLineEventMismatches(db, companyId)) {
    problems.push(
      m.line_charge_total === null
        ? `invoice ${m.invoice_number}: events on line ${m.line_key} (charges ${m.events_charge_total}) but no such line`
        : m.events_charge_total === null
          ? `invoice ${m.invoice_number}: line ${m.line_key} (charges ${m.line_charge_total}) has no events`
          : `invoice ${m.invoice_number}: line ${m.line_key} charges ${m.line_charge_total} / quantity ${m.line_quantity} but its events sum to ${m.events_charge_total} / ${m.events_quantity}`,
    );
  }
  for (const e of await repo.findMisplacedEvents(db, companyId)) {
    problems.push(
      `event ${e.id}: on invoice ${e.invoice_number}, which is not the draft of ${e.contract_id} for ${e.service_period_start}`,
    );
  }
  for (const e of await repo.findEventsOutsideTheirPeriod(db, companyId)) {
    problems.push(
      `event ${e.id}: dated ${e.event_timestamp.toISOString()}, outside its service period ${e.service_period_start}..${e.service_period_end}`,
    );
  }
  for (const c of await repo.findCapExcesses(db, companyId)) {
    problems.push(
      `invoice ${c.invoice_number}: rule ${c.rule_id} charged ${c.capped_total} against a monthly cap of ${c.monthly_cap}`,
    );
  }
  for (const v of await repo.findVersionGaps(db, companyId)) {
    problems.push(
      `contract ${v.contract_id}: current version ${v.current_version} but ${v.versions} versions stored (highest ${v.max_version ?? "none"})`,
    );
  }
  for (const d of await repo.findOrphanDeliveries(db, companyId)) {
    problems.push(`delivery ${d.id}: its event ${d.event_id} does not exist`);
  }
  for (const u of await repo.findUndeliveredEvents(db, companyId)) {
    problems.push(`event ${u.id}: no delivery to endpoint ${u.endpoint_id}, which was subscribed when it happened`);
  }
  for (const r of await repo.findReissueProblems(db, companyId)) problems.push(`invoice ${r.number}: ${r.problem}`);
  for (const c of await repo.findCollectionProblems(db, companyId)) problems.push(`invoice ${c.number}: ${c.problem}`);
  for (const i of await repo.listFrozenInvoices(db, companyId)) {
    const billed = freezeBill(billRecords(i));
    // The line facts frozen beside the figures (event counts, uncapped amounts) are not the lines' to bill.
    if (!isDeepStrictEqual(billed, i.billed === null ? null : figuresOnly(i.billed))) {
      problems.push(
        `invoice ${i.number}: issued with ${JSON.stringify(i.billed)}, but its lines bill ${JSON.stringify(billed)}`,
      );
    }
  }
  for (const e of await repo.findEventsAfterIssue(db, companyId)) {
    problems.push(
      `event ${e.id}: stored on invoice ${e.invoice_number} at ${e.ingested_at.toISOString()}, after it was issued at ${e.issued_at.toISOString()}`,
    );
  }
  for (const d of await repo.findAlteredDocuments(db, companyId)) {
    problems.push(
      `uploaded agreement ${d.id}${d.contract_id ? ` of contract ${d.contract_id}` : ""}: its bytes no longer match the SHA-256 taken at upload`,
    );
  }
  for (const c of await repo.findCreditBalanceMismatches(db, companyId)) {
    problems.push(`credit grant ${c.grant_id}: balance ${c.balance} but its ledger sums to ${c.ledger_total ?? "0"}`);
  }
  for (const c of await repo.findCreditLineMismatches(db, companyId)) {
    problems.push(
      `invoice ${c.invoice_number}: credit line of grant ${c.grant_id} holds ${c.line_total ?? "nothing"} but the grant burned ${c.burned ?? "nothing"} on it`,
    );
  }
  for (const c of await repo.findOvercreditedInvoices(db, companyId)) {
    problems.push(`invoice ${c.invoice_number}: credits of ${c.credit} exceed its usage of ${c.usage ?? "0"}`);
  }
  const { count, ratedTotal } = await repo.countUsageEvents(db, companyId);
  return { ok: problems.length === 0, events: count, ratedTotal, problems };
}
