import { randomBytes } from "node:crypto";
import type { CompanyScope } from "../../db/company-scope.js";
import type { Database } from "../../db/database.js";
import { markHasCredits, type RatingContextCache } from "../contracts/rating-context-cache.js";
import { metricsOf } from "../contracts/pricing-rule.js";
import { withDrafts, type DraftInvoices } from "../invoices/lifecycle/draft-invoices.js";
import type { LineBook } from "../invoices/line-book.js";
import { requireScope } from "../kernel/actor.js";
import { toDateString } from "../kernel/billing-period.js";
import type { Clock } from "../kernel/clock.js";
import { NotFoundError, ValidationError, type ErrorDetail } from "../kernel/errors.js";
import { Big, minorUnitExponent, readDecimal, toDecimalString, toJsonDecimal } from "../kernel/money.js";
import { companyData, type Tenancy } from "../kernel/tenancy.js";
import * as repo from "./credit-repository.js";
import type { CreateCreditGrantInput, CreditGrant } from "./credit-schemas.js";
import { grantState, openWallet, type CreditWallet } from "./credit-wallet.js";

const NAMES = { prepaid: "Prepaid credit", promotional: "Promotional credit" } as const;

function presentGrant(row: repo.GrantRow, ledger?: readonly repo.LedgerRow[]): CreditGrant {
  return {
    object: "credit_grant",
    id: row.id,
    contract: row.contract_id,
    name: row.name,
    type: row.type as CreditGrant["type"],
    amount: toJsonDecimal(row.amount),
    balance: toJsonDecimal(row.balance),
    currency: row.currency,
    starts_on: row.starts_on,
    expires_on: row.expires_on,
    metrics: row.metrics,
    priority: row.priority,
    status: row.status as CreditGrant["status"],
    invoice_number: row.invoice_number,
    created_at: row.created_at.toISOString(),
    ...(ledger
      ? {
          ledger: ledger.map((e) => ({
            kind: e.kind as "grant" | "burn" | "void" | "expiry",
            amount: toJsonDecimal(e.amount),
            invoice_number: e.invoice_number,
            created_at: e.created_at.toISOString(),
          })),
        }
      : {}),
  };
}

/** The grants of these contracts, locked for the transaction, as a wallet that burns them (credit-wallet.ts). */
export async function openCredits(scope: CompanyScope, contractIds: readonly string[]): Promise<CreditWallet> {
  return openWallet((await repo.lockGrantsOfContracts(scope, contractIds)).map(grantState));
}

/** The grants of a contract as they stand, unlocked: a wallet for a preview, never saved. */
export async function peekCredits(scope: CompanyScope, contractId: string): Promise<CreditWallet> {
  return openWallet((await repo.listGrants(scope, contractId)).map(grantState));
}

/**
 * Saves what a wallet burned and gave back: the grants' balances and one ledger entry per grant and invoice, of
 * kind `burn`, or `void` when a voided event's month was priced again without it.
 */
export async function saveCredits(
  scope: CompanyScope,
  wallet: CreditWallet,
  at: Date,
  kind: "burn" | "void" = "burn",
): Promise<void> {
  await repo.updateBalances(scope, wallet.balances());
  await repo.insertLedgerEntries(scope, wallet.movements(kind), at);
}

/** What a new grant did to the months its validity meets (usage/recredit.ts). */
export interface Recrediting {
  /** The open drafts priced again, whose credits it may now pay. */
  recredited: string[];
  /** The invoices that had left draft, left as they were issued. */
  unchanged: { number: string; status: string; periodStart: string; periodEnd: string }[];
}

/** Credits by service date: the open drafts a new grant covers, their credits burned again (usage/recredit.ts). */
export type Recredit = (
  tx: CompanyScope,
  contract: { id: string; currency: string },
  validity: { startsOn: string; expiresOn: string | null },
) => Promise<Recrediting>;

const invalid = (errors: ErrorDetail[]) =>
  new ValidationError(
    `Invalid credit grant: ${errors.map((e) => `${e.path} ${e.message}`).join("; ")}`,
    "invalid_credit_grant",
    errors,
  );

/**
 * Credit grants (docs/api.md, "Credits"): granted on a contract, listed with their balance and ledger, released
 * when they expire. Burning happens where usage is priced (usage/ingest/price.ts).
 */
export function createCreditService({
  db,
  clock,
  drafts,
  lineBook,
  contexts,
  recredit,
}: {
  db: Database;
  clock: Clock;
  drafts: DraftInvoices;
  lineBook: LineBook;
  contexts: RatingContextCache;
  recredit: Recredit;
}) {
  return {
    /**
     * Grants credit (201): the grant and its first ledger entry; a prepaid grant also a one-time line on the
     * contract's draft of this month (the next month's, when this month's invoice has left draft); the open drafts
     * its validity meets burn their credits again (by service date), and the answer names them and the invoices it
     * left as issued. One transaction.
     */
    async grant(tenant: Tenancy, contractId: string, input: CreateCreditGrantInput): Promise<CreditGrant> {
      requireScope(tenant, "contracts:write");
      const contract = (await contexts.get(tenant.data, [contractId], true)).get(contractId);
      if (!contract) throw new NotFoundError("contract");
      const metrics = new Set(contract.programs.flatMap((p) => metricsOf(p.rules)));
      const errors: ErrorDetail[] = [];
      const currency = input.currency ?? contract.currency;
      if (currency !== contract.currency)
        errors.push({ path: "currency", message: `must be the contract's currency, ${contract.currency}` });
      const amount = readDecimal(input.amount, "amount", minorUnitExponent(contract.currency));
      if (!(amount instanceof Big)) errors.push({ path: "amount", message: amount.message });
      else if (amount.lte(0)) errors.push({ path: "amount", message: "must be more than 0" });
      const today = toDateString(clock.now());
      const startsOn = input.starts_on ?? today;
      if (input.expires_on !== undefined && input.expires_on < startsOn)
        errors.push({ path: "expires_on", message: "must be on or after starts_on" });
      const unknown = (input.metrics ?? []).filter((m) => !metrics.has(m));
      if (unknown.length > 0)
        errors.push({ path: "metrics", message: `not metrics of this contract: ${unknown.join(", ")}` });
      if (errors.length > 0 || !(amount instanceof Big)) throw invalid(errors);
      const id = `cg_${randomBytes(8).toString("hex")}`;
      const name = input.name ?? NAMES[input.type];
      const now = clock.now();
      const created = await withDrafts(tenant, drafts, async (tx) => {
        // The contract first, then the draft: the order a dated pricing change takes them in.
        await markHasCredits(tx, contract.id);
        let invoiceNumber: string | null = null;
        if (input.type === "prepaid")
          invoiceNumber = await lineBook.billPurchase(tx, contract, { grantId: id, name, amount }, now);
        await repo.insertGrant(tx, {
          id,
          contract_id: contract.id,
          name,
          type: input.type,
          amount: toDecimalString(amount),
          balance: toDecimalString(amount),
          currency,
          starts_on: startsOn,
          expires_on: input.expires_on ?? null,
          metrics: input.metrics ? [...new Set(input.metrics)] : null,
          priority: input.priority ?? 50,
          status: "active",
          invoice_number: invoiceNumber,
          created_at: now,
        });
        await repo.insertLedgerEntries(
          tx,
          [{ grantId: id, kind: "grant", amount: toDecimalString(amount), invoiceNumber }],
          now,
        );
        // By service date: the open months it covers burn their credits again, now with this grant among them.
        const months = await recredit(tx, contract, { startsOn, expiresOn: input.expires_on ?? null });
        return { row: (await repo.findGrant(tx, contract.id, id))!, months };
      });
      contexts.invalidate(tenant.companyId, [contract.id]);
      return {
        ...presentGrant(created.row),
        recredited_invoices: created.months.recredited,
        unchanged_invoices: created.months.unchanged.map((i) => ({
          number: i.number,
          status: i.status,
          billing_period: { start: i.periodStart, end: i.periodEnd },
        })),
      };
    },

    async list(tenant: Tenancy, contractId: string): Promise<CreditGrant[]> {
      requireScope(tenant, "contracts:read");
      if ((await contexts.get(tenant.data, [contractId], true)).size === 0) throw new NotFoundError("contract");
      return (await repo.listGrants(tenant.data, contractId)).map((g) => presentGrant(g));
    },

    async get(tenant: Tenancy, contractId: string, grantId: string): Promise<CreditGrant> {
      requireScope(tenant, "contracts:read");
      const grant = await repo.findGrant(tenant.data, contractId, grantId);
      if (!grant) throw new NotFoundError("credit_grant");
      return presentGrant(grant, await repo.listLedger(tenant.data, grantId));
    },

    /**
     * The worker's round: every active grant whose last day has passed gives up what is left (an `expiry` ledger
     * entry). Returns how many grants expired.
     */
    async expireDue(limit = 100): Promise<number> {
      const today = toDateString(clock.now());
      let expired = 0;
      for (const due of await repo.findExpiredGrants(db, today, limit)) {
        await companyData(db, due.company_id).transaction(async (tx) => {
          const [grant] = (await repo.lockGrantsOfContracts(tx, [due.contract_id])).filter((g) => g.id === due.id);
          if (!grant || grant.status !== "active") return;
          await repo.insertLedgerEntries(
            tx,
            [
              {
                grantId: grant.id,
                kind: "expiry",
                amount: toDecimalString(new Big(grant.balance).neg()),
                invoiceNumber: null,
              },
            ],
            clock.now(),
          );
          await repo.expireGrant(tx, grant.id);
          expired += 1;
        });
      }
      return expired;
    },
  };
}
