import type { IngestSettings } from "./usage/batch-writer.js";
import type { ReadingBudgets } from "./contracts/agreement-upload.js";
import type { Database } from "../db/database.js";
import { createAccessService } from "./access/access-service.js";
import { createAccountService } from "./account/account-service.js";
import { createContractService } from "./contracts/contract-service.js";
import { createRatingContextCache } from "./contracts/rating-context-cache.js";
import { createCreditService } from "./credits/credit-service.js";
import { createCustomerService } from "./customers/customer-service.js";
import { verifyBilling } from "./invariants/verify.js";
import { createDraftInvoices } from "./invoices/lifecycle/draft-invoices.js";
import { createLineBook } from "./invoices/line-book.js";
import { createOAuthService } from "./oauth/oauth-service.js";
import { createInvoiceService } from "./invoices/invoice-service.js";
import type { Clock } from "./kernel/clock.js";
import { createRecrediting } from "./usage/recredit.js";
import { createRepricing } from "./usage/reprice.js";
import { createUsageService } from "./usage/usage-service.js";
import type { WebhookSettings } from "./webhooks/delivery-engine.js";
import { createWebhookService } from "./webhooks/webhook-service.js";
import type { OutboundHttp } from "../platform/outbound-http.js";
import type { Mailer } from "../platform/smtp-mailer.js";
import type { MailSettings } from "./invoices/delivery/mail-engine.js";

export interface ServiceDeps {
  db: Database;
  clock: Clock;
  publicUrl: string;
  webhookSettings: WebhookSettings;
  /** How webhooks leave the building (SSRF-checked, address-pinned); platform/outbound-http.ts. */
  outboundHttp: OutboundHttp;
  /** How this process writes usage: lanes and calls in flight per company (group commit). */
  ingest?: IngestSettings | undefined;
  /** Keep API keys in memory between requests: only where every revocation passes through this process. */
  rememberKeys: boolean;
  /** How invoices' emails leave (BILLING_SMTP_URL; null: email is off, and the message log says so). */
  mailer: Mailer | null;
  mailSettings: MailSettings;
  /** What reading an uploaded agreement may take (config.ts's; default: the readers' own). */
  readings?: ReadingBudgets | undefined;
}

/** The one object every surface (HTTP, MCP, worker, dashboard, CLI) uses. */
export function createServices(deps: ServiceDeps) {
  const drafts = createDraftInvoices(deps);
  const contexts = createRatingContextCache();
  const book = createLineBook({ drafts });
  const access = createAccessService(deps);
  return {
    access,
    oauth: createOAuthService({ ...deps, access, resource: new URL("/mcp", deps.publicUrl).href }),
    account: createAccountService(deps),
    customers: createCustomerService(deps),
    contracts: createContractService({ ...deps, contexts, repriceFrom: createRepricing({ book, clock: deps.clock }) }),
    usage: createUsageService({ ...deps, book, contexts }),
    invoices: createInvoiceService({ ...deps, drafts }),
    credits: createCreditService({
      ...deps,
      drafts,
      lineBook: book,
      contexts,
      recredit: createRecrediting({ book, clock: deps.clock }),
    }),
    webhooks: createWebhookService({ ...deps, http: deps.outboundHttp, settings: deps.webhookSettings }),
    /** Operators' check of the stored data (`billing verify`, GET /admin/v1/verify). */
    invariants: { verify: (companyId: string | null) => verifyBilling(deps.db, companyId) },
  };
}

export type Services = ReturnType<typeof createServices>;
