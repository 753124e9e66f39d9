import { createHash } from "node:crypto";
import type { CompanyScope } from "../../db/company-scope.js";
import type { Database } from "../../db/database.js";
import { requireScope } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import { NotFoundError } from "../kernel/errors.js";
import type { Tenancy } from "../kernel/tenancy.js";
import * as repo from "./account-repository.js";
import type { Account, SellerProfile, UpdateAccountInput } from "./account-schemas.js";
import { inspectLogo } from "./logo-image.js";

function presentAccount(row: repo.AccountRow, logoSize: { width: number; height: number } | null): Account {
  return {
    object: "account",
    id: row.id,
    name: row.name,
    legal_name: row.legal_name,
    address: row.address,
    tax_id: row.tax_id,
    payment_instructions: row.payment_instructions,
    invoice_footer: row.invoice_footer,
    paper_size: row.paper_size,
    payment_terms_days: row.payment_terms_days,
    reminder_days: row.reminder_days,
    logo:
      row.logo_type === null || logoSize === null
        ? null
        : {
            content_type: row.logo_type,
            size: Number(row.logo_size),
            sha256: row.logo_sha256!,
            width: logoSize.width,
            height: logoSize.height,
          },
    updated_at: row.updated_at?.toISOString() ?? null,
  };
}

async function readAccount(scope: CompanyScope): Promise<Account> {
  const row = await repo.findAccount(scope);
  if (!row) throw new NotFoundError("account");
  const logo = row.logo_type === null ? undefined : await repo.findLogo(scope);
  return presentAccount(row, logo ? inspectLogo(logo.bytes) : null);
}

/**
 * What invoices print about the seller, read in the caller's transaction or connection: the PDF, the hosted
 * page and the email all draw the seller from here, and an issued invoice keeps what it was issued with.
 */
export async function findSellerProfile(scope: CompanyScope): Promise<SellerProfile> {
  const row = await repo.findAccount(scope);
  if (!row) throw new NotFoundError("account");
  const logo = row.logo_type === null ? undefined : await repo.findLogo(scope);
  return {
    name: row.legal_name ?? row.name,
    address: row.address,
    taxId: row.tax_id,
    paymentInstructions: row.payment_instructions,
    invoiceFooter: row.invoice_footer,
    paperSize: row.paper_size,
    logo: logo ? { contentType: logo.content_type, bytes: logo.bytes } : null,
  };
}

/** The names the seller goes by, its legal name first: the party of an agreement that is not the customer. */
export async function sellerNames(scope: CompanyScope): Promise<string[]> {
  const row = await repo.findAccount(scope);
  if (!row) throw new NotFoundError("account");
  return [...new Set([row.legal_name, row.name].filter((name): name is string => name !== null && name.trim() !== ""))];
}

/** The seller's profile (Settings, and GET/PATCH /v1/billing/account) and its logo. */
export function createAccountService({ clock }: { db: Database; clock: Clock }) {
  return {
    async get(tenant: Tenancy): Promise<Account> {
      requireScope(tenant, "invoices:read", "invoices:write");
      return readAccount(tenant.data);
    },

    async update(tenant: Tenancy, input: UpdateAccountInput): Promise<Account> {
      requireScope(tenant, "invoices:write");
      return tenant.transaction(async (tx) => {
        const changes: repo.AccountChanges = {};
        for (const [key, value] of Object.entries(input) as [keyof repo.AccountChanges, unknown][]) {
          if (value !== undefined) (changes as Record<string, unknown>)[key] = value;
        }
        // Reminder days are kept in the order they come round.
        if (changes.reminder_days) changes.reminder_days = [...changes.reminder_days].sort((a, b) => a - b);
        if (Object.keys(changes).length > 0) await repo.updateAccount(tx, changes, clock.now());
        return readAccount(tx);
      });
    },

    /** Sets the logo: PNG or JPEG, at most 1 MiB, checked whole first (logo-image.ts). */
    async putLogo(tenant: Tenancy, bytes: Uint8Array): Promise<Account> {
      requireScope(tenant, "invoices:write");
      const image = inspectLogo(bytes);
      const sha256 = createHash("sha256").update(bytes).digest("hex");
      return tenant.transaction(async (tx) => {
        await repo.upsertLogo(tx, { contentType: image.contentType, bytes, sha256 }, clock.now());
        return readAccount(tx);
      });
    },

    async deleteLogo(tenant: Tenancy): Promise<Account> {
      requireScope(tenant, "invoices:write");
      return tenant.transaction(async (tx) => {
        await repo.deleteLogo(tx, clock.now());
        return readAccount(tx);
      });
    },

    async logo(tenant: Tenancy): Promise<{ contentType: string; bytes: Uint8Array }> {
      requireScope(tenant, "invoices:read", "invoices:write");
      const logo = await repo.findLogo(tenant.data);
      if (!logo) throw new NotFoundError("logo");
      return { contentType: logo.content_type, bytes: logo.bytes };
    },
  };
}
