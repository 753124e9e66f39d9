import { createHash } from "node:crypto";
import type { CompanyScope } from "../../db/company-scope.js";
import { requireScope } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import { ChildJobError } from "../../platform/child-pool.js";
import { normalisedLogo } from "../documents/document-pool.js";
import { supportedLocale } from "../kernel/document-format.js";
import { NotFoundError, TooLargeError, ValidationError } from "../kernel/errors.js";
import type { Tenancy } from "../kernel/tenancy.js";
import * as repo from "./account-repository.js";
import { MAX_LOGO_BYTES, type Account, type SellerProfile, type UpdateAccountInput } from "./account-schemas.js";
import { storedLogoSize } from "./logo-image.js";

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
    locale: row.locale,
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
  // Its header's size: the logo was checked whole when it was stored.
  return presentAccount(row, logo ? (storedLogoSize(logo.bytes) ?? null) : null);
}

const sha256Hex = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

/**
 * The logo as it is stored and printed (docs/api.md, "Account", the logo): checked whole and, if larger than a
 * document prints it, scaled down, in the document processes (documents/document-pool.ts), never on the
 * service's main thread. Refused as 413 `logo_too_large` over 1 MiB (before any process sees it), 400
 * `invalid_logo` when the checks or the decoding refuse it, 429 `too_many_documents` when its company's turn is full.
 */
async function normaliseUpload(
  companyId: string,
  bytes: Uint8Array,
): Promise<{ contentType: "image/png" | "image/jpeg"; bytes: Uint8Array }> {
  if (bytes.length > MAX_LOGO_BYTES) {
    throw new TooLargeError(`The logo is over 1 MiB (${MAX_LOGO_BYTES} bytes)`, "logo_too_large");
  }
  let normal: Awaited<ReturnType<typeof normalisedLogo>>;
  try {
    normal = await normalisedLogo(companyId, bytes);
  } catch (error) {
    if (!(error instanceof ChildJobError)) throw error;
    const why = "it cannot be decoded within the memory and time one image may take";
    throw new ValidationError(`The logo must be a PNG or JPEG image: ${why}`, "invalid_logo", [
      { path: "logo", message: why },
    ]);
  }
  if (normal.kind === "refused") {
    if (normal.code === "logo_too_large") throw new TooLargeError(normal.message, normal.code);
    throw new ValidationError(normal.message, normal.code, normal.details);
  }
  return { contentType: normal.contentType, bytes: normal.bytes ?? bytes };
}

/**
 * Stores `small` (the same logo made small) in place of the account's logo whose bytes were `original`, unless the
 * account's logo changed meanwhile: a logo kept from before logos were made small at upload, the first time a
 * document prints it (invoices/documents/invoice-parties.ts).
 */
export async function replaceStoredLogo(
  scope: CompanyScope,
  original: Uint8Array,
  small: { contentType: string; bytes: Uint8Array },
): Promise<void> {
  await repo.replaceLogoBytes(scope, sha256Hex(original), { ...small, sha256: sha256Hex(small.bytes) });
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
    locale: row.locale,
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
export function createAccountService({ clock }: { clock: Clock }) {
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
        // A locale is kept as Intl writes it ("en-us" is stored "en-US").
        if (changes.locale !== undefined) changes.locale = supportedLocale(changes.locale) ?? changes.locale;
        // Reminder days are kept in the order they come round.
        if (changes.reminder_days) changes.reminder_days = [...changes.reminder_days].sort((a, b) => a - b);
        if (Object.keys(changes).length > 0) await repo.updateAccount(tx, changes, clock.now());
        return readAccount(tx);
      });
    },

    /**
     * Sets the logo: PNG or JPEG, at most 1 MiB and 4000 pixels a side, checked whole (logo-image.ts) and stored
     * at most 600 × 224 pixels (normaliseUpload): what every document then prints.
     */
    async putLogo(tenant: Tenancy, bytes: Uint8Array): Promise<Account> {
      requireScope(tenant, "invoices:write");
      const logo = await normaliseUpload(tenant.companyId, bytes);
      const sha256 = sha256Hex(logo.bytes);
      return tenant.transaction(async (tx) => {
        await repo.upsertLogo(tx, { contentType: logo.contentType, bytes: logo.bytes, sha256 }, clock.now());
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

    /** The logo as stored and printed: as sent when it fitted, else the small image made of it at upload. */
    async logo(tenant: Tenancy): Promise<{ contentType: string; bytes: Uint8Array }> {
      requireScope(tenant, "invoices:read", "invoices:write");
      const logo = await repo.findLogo(tenant.data);
      if (!logo) throw new NotFoundError("logo");
      return { contentType: logo.content_type, bytes: logo.bytes };
    },
  };
}
