import { forCompany } from "../../db/company-scope.js";
import { randomBytes } from "node:crypto";
import type { Database, Tx } from "../../db/database.js";
import { findCompanyById } from "../access/access-repository.js";
import { findCustomerById } from "../customers/customer-repository.js";
import { requireScope, type Actor } from "../kernel/actor.js";
import { termEnd, toDateString } from "../kernel/billing-period.js";
import type { Clock } from "../kernel/clock.js";
import { insertCustomer } from "../customers/customer-service.js";
import { ConflictError, NotFoundError, ValidationError, type ErrorDetail } from "../kernel/errors.js";
import { isUuid, newId } from "../kernel/ids.js";
import { readAgreementTerms, type AgreementReading } from "./agreement-reading.js";
import {
  checkAgreementFile,
  READ_PAGES,
  requireUploadRoom,
  sha256Hex,
  storedFilename,
  type UploadedFile,
} from "./agreement-upload.js";
import { recordEvent } from "../webhooks/outbox.js";
import * as repo from "./contract-repository.js";
import type { RatingContextCache } from "./rating-context-cache.js";
import { uploadTermsInput, type Contract, type UploadTerms } from "./contract-schemas.js";
import { metricsOf, normalizeRule, presentRule, type PricingRule, type RuleFields } from "./pricing-rule.js";

/** The id stem of a sample contract: the customer's name, lower-cased, in ASCII letters, digits and dashes. */
export function slugify(name: string): string {
  const slug = name
    .normalize("NFKD")
    .replace(/[\u0300-\u036f]/g, "")
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 48)
    .replace(/-+$/g, "");
  return slug || "customer";
}

const compactTimestamp = (date: Date) => date.toISOString().replace(/\D/g, "").slice(0, 14);

/** The sample program (docs/api.md, "Contracts"; docs/decisions.md, "Invoices"): two wire metrics and a 1000 USD monthly minimum. */
export function sampleRules(): PricingRule[] {
  const rule = (fields: RuleFields) => {
    const result = normalizeRule(fields, "USD");
    if (!result.rule) throw new Error("invalid sample rule");
    return result.rule;
  };
  return [
    rule({ name: "Domestic wire", type: "usage", model: "flat", metric: "domestic_wire", amount: "20.00" }),
    rule({ name: "International wire", type: "usage", model: "flat", metric: "international_wire", amount: "30.00" }),
    rule({ name: "Monthly minimum", type: "minimum", model: "flat", amount: "1000.00", frequency: "monthly" }),
  ];
}

export function createContractService({
  db,
  clock,
  publicUrl,
  contexts,
}: {
  db: Database;
  clock: Clock;
  publicUrl: string;
  contexts: RatingContextCache;
}) {
  // A generated agreement is a capability link anyone holding it may open; an uploaded one is served only
  // to its own company, behind an API key (docs/api.md, "Uploading a contract").
  const pdfUrl = (row: repo.ContractRow) =>
    row.document_id === null
      ? `${publicUrl}/v1/agreements/${row.pdf_token}.pdf`
      : `${publicUrl}/v1/billing/contracts/${encodeURIComponent(row.id)}/agreement.pdf`;

  const present = (row: repo.ContractRow): Contract => ({
    object: "contract",
    id: row.id,
    customer_id: row.customer_id,
    customer_name: row.customer_name,
    contract_number: row.contract_number,
    status: row.status as Contract["status"],
    start_date: row.start_date,
    end_date: row.end_date,
    currency: row.currency,
    billing_cadence: row.billing_cadence,
    metrics: row.metrics,
    pdf_url: pdfUrl(row),
    sample: row.sample,
    created_at: row.created_at.toISOString(),
  });

  const presentProgram = (contractId: string, v: repo.ProgramVersionRow) => ({
    object: "pricing_program" as const,
    contract: contractId,
    version: v.version,
    effective_date: v.effective_date,
    rules: v.rules.map(presentRule),
  });

  /** Appends a version with `rules` to a locked contract's program (append-only; docs/api.md, "Pricing programs and rules"). */
  async function appendVersion(tx: Tx, contract: repo.ContractRow, rules: PricingRule[]) {
    const version = contract.current_version + 1;
    await repo.insertProgramVersion(forCompany(tx, contract.company_id), {
      company_id: contract.company_id,
      contract_id: contract.id,
      version,
      effective_date: toDateString(clock.now()),
      rules,
      created_at: clock.now(),
    });
    await repo.setCurrentVersion(forCompany(tx, contract.company_id), contract.id, version, metricsOf(rules));
    return version;
  }

  /** This process rates with the new version at once; other processes find out at their next write. */
  async function afterCommitForget<T>(actor: Actor, contractId: string, committed: Promise<T>): Promise<T> {
    const result = await committed;
    contexts.invalidate(actor.companyId, [contractId]);
    return result;
  }

  async function lockedContractWithRules(tx: Tx, actor: Actor, contractId: string) {
    const contract = await repo.lockContract(forCompany(tx, actor.companyId), contractId);
    if (!contract) throw new NotFoundError("contract");
    const program = await repo.findProgramVersion(
      forCompany(tx, actor.companyId),
      contractId,
      contract.current_version,
    );
    return { contract, rules: program?.rules ?? [] };
  }

  /** A new contract's row: numbered, active, monthly, with version 1 of its program. */
  async function newContractRow(
    tx: Tx,
    actor: Actor,
    customer: { id: string; name: string },
    terms: {
      id: string;
      start_date: string;
      end_date: string | null;
      currency: string;
      sample: boolean;
      rules: PricingRule[];
      document_id: string | null;
    },
  ): Promise<repo.ContractRow> {
    const number = await repo.nextCounterValues(forCompany(tx, actor.companyId), "contract_number", 1);
    return {
      company_id: actor.companyId,
      id: terms.id,
      contract_number: `CN-${String(number).padStart(6, "0")}`,
      customer_id: customer.id,
      customer_name: customer.name,
      status: "active",
      start_date: terms.start_date,
      end_date: terms.end_date,
      currency: terms.currency,
      billing_cadence: "monthly",
      sample: terms.sample,
      current_version: 1,
      metrics: metricsOf(terms.rules),
      pdf_token: randomBytes(32).toString("base64url"),
      document_id: terms.document_id,
      created_at: clock.now(),
    };
  }

  /** After the contract row is in: version 1 of its program and its `contract.created` event. */
  async function completeNewContract(tx: Tx, row: repo.ContractRow, rules: PricingRule[]): Promise<Contract> {
    await repo.insertProgramVersion(forCompany(tx, row.company_id), {
      company_id: row.company_id,
      contract_id: row.id,
      version: 1,
      effective_date: row.start_date,
      rules,
      created_at: row.created_at,
    });
    const contract = present(row);
    await recordEvent(tx, clock, row.company_id, "contract.created", contract);
    return contract;
  }

  /**
   * The customer, the contract with version 1 of its program, and their events, in the caller's transaction:
   * the terms are checked first, so a refusal writes nothing.
   */
  async function createUploaded(
    tx: Tx,
    actor: Actor,
    { terms, rules }: CheckedTerms,
    document: { id: string },
  ): Promise<Contract> {
    let customer: { id: string; name: string };
    if (terms.customer.id !== undefined) {
      const found = isUuid(terms.customer.id)
        ? await findCustomerById(forCompany(tx, actor.companyId), terms.customer.id)
        : undefined;
      if (!found) throw new NotFoundError("customer");
      customer = found;
    } else {
      customer = await insertCustomer(tx, clock, actor.companyId, { ...terms.customer, name: terms.customer.name! });
    }
    const row = await newContractRow(tx, actor, customer, {
      id: terms.contract_id,
      start_date: terms.start_date,
      end_date: terms.end_date ?? null,
      currency: terms.currency,
      sample: false,
      rules,
      document_id: document.id,
    });
    if (!(await repo.insertContractUnlessIdTaken(forCompany(tx, actor.companyId), row))) {
      const existing = await repo.findContract(forCompany(tx, actor.companyId), terms.contract_id);
      throw new ConflictError(`A contract with id '${terms.contract_id}' already exists`, "contract_exists", {
        contract: existing ? present(existing) : undefined,
      });
    }
    return completeNewContract(tx, row, rules);
  }

  const documentRow = (
    file: UploadedFile,
    reading: AgreementReading | null,
  ): Omit<repo.ContractDocumentRow, "contract_id"> => ({
    id: newId(),
    filename: storedFilename(file.filename),
    content: file.bytes,
    sha256: sha256Hex(file.bytes),
    reading,
    created_at: clock.now(),
  });

  return {
    present,

    async list(actor: Actor, status: string | undefined): Promise<Contract[]> {
      requireScope(actor, "contracts:read");
      return (await repo.listContracts(forCompany(db, actor.companyId), status)).map(present);
    },

    async get(actor: Actor, contractId: string): Promise<Contract> {
      requireScope(actor, "contracts:read");
      const row = await repo.findContract(forCompany(db, actor.companyId), contractId);
      if (!row) throw new NotFoundError("contract");
      return present(row);
    },

    /**
     * Creates an active sample contract for a customer (docs/api.md, "Contracts") with its program version 1 and its
     * `contract.created` event, in one transaction.
     */
    async createSample(actor: Actor, customerId: string): Promise<Contract> {
      requireScope(actor, "contracts:write");
      return db.transaction(async (tx) => {
        const customer = isUuid(customerId)
          ? await findCustomerById(forCompany(tx, actor.companyId), customerId)
          : undefined;
        if (!customer) throw new NotFoundError("customer");
        const now = clock.now();
        const rules = sampleRules();
        const startDate = toDateString(now);
        const row = await newContractRow(tx, actor, customer, {
          id: "",
          start_date: startDate,
          end_date: termEnd(startDate, 1),
          currency: "USD",
          sample: true,
          rules,
          document_id: null,
        });
        // `{slug}-test`, then with a timestamp suffix, then numbered: whichever is free (checked by the insert itself).
        const stem = `${slugify(customer.name)}-test`;
        const candidates = [stem, `${stem}-${compactTimestamp(now)}`];
        for (let n = 2; n < 50; n++) candidates.push(`${stem}-${compactTimestamp(now)}-${n}`);
        let inserted = false;
        for (const id of candidates) {
          row.id = id;
          if (await repo.insertContractUnlessIdTaken(forCompany(tx, actor.companyId), row)) {
            inserted = true;
            break;
          }
        }
        if (!inserted) throw new ConflictError("Could not find a free contract id; try again", "contract_id_taken");
        return completeNewContract(tx, row, rules);
      });
    },

    /** Refuses (429 too_many_uploads) an upload its company's turn could not take now: asked before its body is read. */
    requireUploadRoom(actor: Actor): void {
      requireScope(actor, "contracts:write");
      requireUploadRoom(actor.companyId);
    },

    /**
     * A contract from its signed agreement (API: POST /v1/billing/contracts/upload): the PDF is checked, then
     * stored with the customer (when new), the contract and its program, in one transaction.
     */
    async upload(actor: Actor, file: UploadedFile, rawTerms: unknown): Promise<Contract> {
      requireScope(actor, "contracts:write");
      // The terms first: they cost nothing to check, the file is parsed in a process of its own.
      const terms = checkUploadTerms(rawTerms);
      await checkAgreementFile(actor.companyId, file);
      return db.transaction(async (tx) => {
        const document = documentRow(file, null);
        await repo.insertDocument(forCompany(tx, actor.companyId), document);
        return createUploaded(tx, actor, terms, document);
      });
    },

    /**
     * The dashboard's first step: the checked PDF is kept for a day, with the terms read from its text (null
     * when it does not follow the agreement's layout), until the reviewed terms are saved with saveStaged. A
     * company's 20 newest waiting uploads are kept; an older one is gone (its review page answers 404).
     */
    async stageUpload(actor: Actor, file: UploadedFile): Promise<{ id: string; reading: AgreementReading | null }> {
      requireScope(actor, "contracts:write");
      const reading = readAgreementTerms(await checkAgreementFile(actor.companyId, file, READ_PAGES));
      const document = documentRow(file, reading);
      await db.transaction(async (tx) => {
        await repo.deleteStaleDocuments(
          forCompany(tx, actor.companyId),
          new Date(clock.now().getTime() - STAGED_UPLOAD_MS),
          STAGED_UPLOADS_KEPT - 1,
        );
        await repo.insertDocument(forCompany(tx, actor.companyId), document);
      });
      return { id: document.id, reading };
    },

    /** A staged upload: its file name, what was read from it, and the contract it became (if saved). */
    async staged(actor: Actor, documentId: string) {
      requireScope(actor, "contracts:write");
      const row = isUuid(documentId) ? await repo.findDocument(forCompany(db, actor.companyId), documentId) : undefined;
      if (!row) throw new NotFoundError("upload");
      return {
        id: row.id,
        filename: row.filename,
        pdf: row.content,
        reading: row.reading as AgreementReading | null,
        contractId: row.contract_id,
      };
    },

    /** Saves reviewed terms with a staged upload; an upload is saved once (409 `upload_saved` after). */
    async saveStaged(actor: Actor, documentId: string, rawTerms: unknown): Promise<Contract> {
      requireScope(actor, "contracts:write");
      return db.transaction(async (tx) => {
        const row = isUuid(documentId)
          ? await repo.findDocument(forCompany(tx, actor.companyId), documentId, true)
          : undefined;
        if (!row) throw new NotFoundError("upload");
        // Asked again now that the row is locked: a save that held the lock before has committed its contract,
        // which the locking statement itself (begun before that commit) could not see.
        const saved = await repo.findContractIdOfDocument(forCompany(tx, actor.companyId), documentId);
        if (saved !== undefined) {
          throw new ConflictError(`This upload was already saved as contract '${saved}'`, "upload_saved", {
            contract_id: saved,
          });
        }
        return createUploaded(tx, actor, checkUploadTerms(rawTerms), row);
      });
    },

    /**
     * The contract's agreement for its own company: the uploaded PDF as it was sent (`uploaded`: someone's
     * file, which surfaces never show inline), or the generated one.
     */
    async agreementFile(
      actor: Actor,
      contractId: string,
    ): Promise<{ filename: string; pdf: Buffer; uploaded: boolean }> {
      requireScope(actor, "contracts:read");
      const contract = await repo.findContract(forCompany(db, actor.companyId), contractId);
      if (!contract) throw new NotFoundError("contract");
      if (contract.document_id === null)
        return { filename: `${contract.contract_number}.pdf`, pdf: await renderAgreement(contract), uploaded: false };
      const document = await repo.findDocument(forCompany(db, actor.companyId), contract.document_id);
      if (!document) throw new NotFoundError("agreement");
      return { filename: document.filename, pdf: document.content, uploaded: true };
    },

    async getPricing(actor: Actor, contractId: string) {
      requireScope(actor, "contracts:read");
      const contract = await repo.findContract(forCompany(db, actor.companyId), contractId);
      if (!contract) throw new NotFoundError("contract");
      const program = await repo.findProgramVersion(
        forCompany(db, actor.companyId),
        contractId,
        contract.current_version,
      );
      if (!program) throw new NotFoundError("pricing_program");
      return presentProgram(contractId, program);
    },

    /** Every version of the contract's pricing program, oldest first, with when each was written. */
    async pricingHistory(actor: Actor, contractId: string) {
      requireScope(actor, "contracts:read");
      const contract = await repo.findContract(forCompany(db, actor.companyId), contractId);
      if (!contract) throw new NotFoundError("contract");
      const versions = await repo.listProgramVersions(forCompany(db, actor.companyId), contractId);
      return versions.map((v) => ({ ...presentProgram(contractId, v), created_at: v.created_at.toISOString() }));
    },

    /** Appends a rule as a new program version (201); a supplied id that exists answers 409. */
    async addRule(actor: Actor, contractId: string, fields: RuleFields) {
      requireScope(actor, "contracts:write");
      return afterCommitForget(
        actor,
        contractId,
        db.transaction(async (tx) => {
          const { contract, rules } = await lockedContractWithRules(tx, actor, contractId);
          if (fields.id !== undefined && rules.some((r) => r.id === fields.id)) {
            throw new ConflictError(
              `A pricing rule with id '${fields.id}' already exists on this contract`,
              "rule_exists",
            );
          }
          const result = normalizeRule(fields, contract.currency);
          if (result.errors)
            throw new ValidationError(
              `Invalid pricing rule: ${result.errors.map((e) => `${e.path} ${e.message}`).join("; ")}`,
              "invalid_pricing_rule",
              result.errors,
            );
          const version = await appendVersion(tx, contract, [...rules, result.rule]);
          return { object: "pricing_rule" as const, contract: contract.id, version, rule: presentRule(result.rule) };
        }),
      );
    },

    /** Merges the supplied fields into a rule (null clears a field) and writes a new program version. */
    async updateRule(actor: Actor, contractId: string, ruleId: string, fields: RuleFields) {
      requireScope(actor, "contracts:write");
      return afterCommitForget(
        actor,
        contractId,
        db.transaction(async (tx) => {
          const { contract, rules } = await lockedContractWithRules(tx, actor, contractId);
          const index = rules.findIndex((r) => r.id === ruleId);
          if (index < 0) throw new NotFoundError("pricing_rule");
          if (fields.id !== undefined && fields.id !== ruleId) {
            throw new ValidationError("A rule's id cannot change", "invalid_pricing_rule", [
              { path: "id", message: "cannot change" },
            ]);
          }
          const existing = rules[index]!;
          const merged: RuleFields = { ...existing, ...withoutUndefined(fields), id: ruleId };
          // Switching model drops the price field of the old model unless the update sets it.
          if (fields.model && fields.model !== existing.model) {
            if (fields.model === "percentage" && fields.amount === undefined) merged.amount = null;
            if (fields.model === "flat" && fields.rate === undefined) merged.rate = null;
          }
          const result = normalizeRule(merged, contract.currency);
          if (result.errors)
            throw new ValidationError(
              `Invalid pricing rule: ${result.errors.map((e) => `${e.path} ${e.message}`).join("; ")}`,
              "invalid_pricing_rule",
              result.errors,
            );
          const next = rules.map((r, i) => (i === index ? result.rule : r));
          const version = await appendVersion(tx, contract, next);
          return { object: "pricing_rule" as const, contract: contract.id, version, rule: presentRule(result.rule) };
        }),
      );
    },

    /** The agreement PDF behind a `pdf_url` (no API key: the token in the URL is the capability). */
    async agreementPdf(token: string): Promise<Buffer> {
      const contract = /^[A-Za-z0-9_-]{43}$/.test(token) ? await repo.findContractByPdfToken(db, token) : undefined;
      // An uploaded agreement has no public link: its token is never handed out, and is refused all the same.
      if (!contract || contract.document_id !== null) throw new NotFoundError("agreement");
      return renderAgreement(contract);
    },
  };

  /** The generated agreement of a contract, from its current program. */
  async function renderAgreement(contract: repo.ContractRow): Promise<Buffer> {
    const [company, program] = await Promise.all([
      findCompanyById(db, contract.company_id),
      repo.findProgramVersion(forCompany(db, contract.company_id), contract.id, contract.current_version),
    ]);
    const rules = program?.rules ?? [];
    const minimums = rules.filter((r) => r.type === "minimum");
    // pdfkit and its fonts cost ~27 MB of memory once loaded: only a process that renders an agreement
    // pays for them (docs/performance.md, peak RSS).
    const { renderAgreementPdf } = await import("./agreement-pdf.js");
    return renderAgreementPdf({
      companyName: company?.name ?? "",
      customerName: contract.customer_name,
      contractId: contract.id,
      contractNumber: contract.contract_number,
      startDate: contract.start_date,
      endDate: contract.end_date,
      currency: contract.currency,
      billingCadence: contract.billing_cadence,
      sample: contract.sample,
      programVersion: contract.current_version,
      rules,
      minimumAmount: minimums.length > 0 ? minimums[0]!.amount : null,
      generatedAt: clock.now(),
    });
  }
}

/** How long a dashboard upload waits for its terms to be reviewed and saved, and how many may wait at once. */
const STAGED_UPLOAD_MS = 24 * 60 * 60 * 1000;
const STAGED_UPLOADS_KEPT = 20;

interface CheckedTerms {
  terms: UploadTerms;
  rules: PricingRule[];
}

/** The terms and each of their rules checked, before anything is read or written. */
function checkUploadTerms(raw: unknown): CheckedTerms {
  const terms = parseUploadTerms(raw);
  return { terms, rules: normalizeUploadRules(terms) };
}

/** The terms through their schema; a refusal names each field, relative to the terms object. */
function parseUploadTerms(raw: unknown): UploadTerms {
  const result = uploadTermsInput.safeParse(raw);
  if (result.success) return result.data;
  const details = result.error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: /received undefined/.test(issue.message) ? "is required" : issue.message,
  }));
  const first = details[0]!;
  throw new ValidationError(
    `Invalid terms. ${first.path ? `${first.path}: ` : ""}${first.message}`,
    "invalid_terms",
    details,
  );
}

/** Every rule through normalizeRule, as addPricingRule does, with each error under `rules.{i}`. */
function normalizeUploadRules(terms: UploadTerms): PricingRule[] {
  const errors: ErrorDetail[] = [];
  const rules: PricingRule[] = [];
  const ids = new Set<string>();
  terms.rules.forEach((fields, index) => {
    if (fields.id !== undefined && ids.has(fields.id))
      errors.push({ path: `rules.${index}.id`, message: "is used by another rule of this contract" });
    if (fields.id !== undefined) ids.add(fields.id);
    const result = normalizeRule(fields, terms.currency);
    if (result.errors)
      errors.push(...result.errors.map((e) => ({ path: `rules.${index}.${e.path}`, message: e.message })));
    else rules.push(result.rule);
  });
  if (errors.length > 0) {
    throw new ValidationError(
      `Invalid pricing rule: ${errors.map((e) => `${e.path} ${e.message}`).join("; ")}`,
      "invalid_pricing_rule",
      errors,
    );
  }
  return rules;
}

function withoutUndefined<T extends object>(value: T): Partial<T> {
  return Object.fromEntries(Object.entries(value).filter(([, v]) => v !== undefined)) as Partial<T>;
}
