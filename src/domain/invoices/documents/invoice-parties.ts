import { createHash } from "node:crypto";
import type { CompanyScope } from "../../../db/company-scope.js";
import { findSellerProfile, replaceStoredLogo } from "../../account/account-service.js";
import type { PaperSize, SellerProfile } from "../../account/account-schemas.js";
import { fitsLogoPixels, storedLogoSize } from "../../account/logo-image.js";
import { ChildJobError } from "../../../platform/child-pool.js";
import { normalisedLogo } from "../../documents/document-pool.js";
import * as repo from "../invoice-read-repository.js";

/**
 * What an invoice's documents say about who bills whom (docs/api.md, "Invoices", the PDF): the seller (the
 * account's profile), the customer billed, the customer's memo or PO number and the paper size. A draft's are
 * read live; issuing freezes them in `invoices.parties` (`freezeInvoiceParties`), so that a later edit of the
 * account or the customer never changes an issued invoice's documents. The logo is kept by its SHA-256
 * (`invoice_logos`, migration 0021).
 */
export interface InvoiceParties {
  seller: {
    name: string;
    address: string | null;
    tax_id: string | null;
    payment_instructions: string | null;
    footer: string | null;
    logo_sha256: string | null;
    /** How the documents write dates and money; absent on invoices issued before it was kept (en-US). */
    locale?: string;
  };
  customer: {
    name: string;
    address: string | null;
    country: string | null;
    email: string | null;
    tax_id: string | null;
  };
  memo: string | null;
  paper_size: PaperSize;
}

/** A logo as a document draws it. */
export interface PartyLogo {
  contentType: "image/png" | "image/jpeg";
  bytes: Uint8Array;
}

/** The parties with the logo's bytes, as the renderers take them. */
export interface DocumentParties {
  parties: InvoiceParties;
  logo: PartyLogo | null;
}

const sha256Hex = (bytes: Uint8Array): string => createHash("sha256").update(bytes).digest("hex");

function partiesOf(seller: SellerProfile, customer: repo.LiveCustomerColumns): DocumentParties {
  return {
    parties: {
      seller: {
        name: seller.name,
        address: seller.address,
        tax_id: seller.taxId,
        payment_instructions: seller.paymentInstructions,
        footer: seller.invoiceFooter,
        logo_sha256: seller.logo === null ? null : sha256Hex(seller.logo.bytes),
        locale: seller.locale,
      },
      customer: {
        name: customer.customer_name,
        address: customer.customer_address,
        country: customer.customer_country,
        email: customer.customer_email,
        tax_id: customer.customer_tax_id,
      },
      memo: customer.customer_memo,
      paper_size: seller.paperSize,
    },
    logo: seller.logo,
  };
}

/**
 * Freezes the invoice's parties as they are now, in the issuing transaction: the one call issuing makes
 * (finalize-invoice.ts), whichever path issues (the API's finalize, the invoice worker).
 */
export async function freezeInvoiceParties(tx: CompanyScope, number: string): Promise<void> {
  const customer = await repo.findLiveCustomer(tx, number);
  if (!customer) throw new Error(`invoice ${number} is gone while it is issued`);
  const { parties, logo } = partiesOf(await findSellerProfile(tx), customer);
  await repo.storeInvoiceParties(
    tx,
    number,
    parties,
    logo === null ? null : { sha256: parties.seller.logo_sha256!, contentType: logo.contentType, bytes: logo.bytes },
  );
}

/**
 * The parties an invoice's documents name: those frozen when it was issued, else (a draft, or an invoice issued
 * before they were kept) the account's and the customer's as they are now.
 */
export async function documentParties(db: CompanyScope, row: repo.InvoiceDocumentRow): Promise<DocumentParties> {
  if (row.parties === null || row.parties === undefined) {
    const live = partiesOf(await findSellerProfile(db), row);
    const logo =
      live.logo && (await madeSmall(db, live.logo, (small) => replaceStoredLogo(db, live.logo!.bytes, small)));
    return { ...live, logo: logo ?? null };
  }
  const parties = row.parties as InvoiceParties;
  const sha256 = parties.seller.logo_sha256;
  const stored = sha256 === null ? undefined : await repo.findInvoiceLogo(db, sha256);
  const logo =
    stored &&
    (await madeSmall(db, { contentType: stored.content_type, bytes: stored.bytes }, (small) =>
      repo.replaceInvoiceLogo(db, sha256!, small),
    ));
  return { parties, logo: logo ?? null };
}

/**
 * A logo stored before logos were made small at upload (docs/decisions.md, "Documents and logos"): scaled down
 * once, in the document processes, on the first document that prints it, and stored so (`store`); every later
 * document embeds the small one. A logo that cannot be scaled is printed as it is, as before.
 */
async function madeSmall(
  db: CompanyScope,
  logo: PartyLogo,
  store: (small: PartyLogo) => Promise<void>,
): Promise<PartyLogo> {
  const size = storedLogoSize(logo.bytes);
  if (size === undefined || fitsLogoPixels(size)) return logo;
  try {
    const normal = await normalisedLogo(db.companyId, logo.bytes);
    if (normal.kind !== "logo" || normal.bytes === undefined) return logo;
    const small: PartyLogo = { contentType: normal.contentType, bytes: normal.bytes };
    await store(small);
    return small;
  } catch (error) {
    if (error instanceof ChildJobError) return logo;
    throw error;
  }
}
