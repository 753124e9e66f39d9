import type { Tenancy } from "../kernel/tenancy.js";
import type { CompanyScope } from "../../db/company-scope.js";
import { requireScope } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import { ConflictError, NotFoundError, ValidationError } from "../kernel/errors.js";
import { isUuid, newId } from "../kernel/ids.js";
import { toJsonMoney } from "../kernel/money.js";
import { toPage, type Page, type PageRequest } from "../kernel/pagination.js";
import { recordEvent } from "../webhooks/outbox.js";
import * as repo from "./customer-repository.js";
import type { CreateCustomerInput, Customer, UpdateCustomerInput } from "./customer-schemas.js";

function presentCustomer(row: repo.CustomerRow): Customer {
  const days = row.payment_terms_days;
  return {
    object: "customer",
    id: row.id,
    name: row.name,
    external_id: row.external_id,
    email: row.email,
    domain: row.domain,
    country: row.country,
    address: row.address,
    registration_number: row.registration_number,
    payment_terms_days: days,
    payment_terms: days === null ? null : `Net ${days}`,
    tax_id: row.tax_id,
    invoice_memo: row.invoice_memo,
    invoice_delivery: row.invoice_delivery,
    credit_balances: (row.credit_balances ?? []).map((b) => ({
      currency: b.currency,
      amount: toJsonMoney(b.amount, b.currency),
    })),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at?.toISOString() ?? null,
  };
}

/**
 * Inserts a customer and its `customer.created` event in the caller's transaction (creating one, and uploading
 * a contract for a new customer). Customers are never matched by name; an `external_id` the company already
 * uses is a 409 with the existing customer.
 */
export async function insertCustomer(tx: CompanyScope, clock: Clock, input: CreateCustomerInput): Promise<Customer> {
  const row: repo.CustomerRow = {
    company_id: tx.companyId,
    id: newId(),
    name: input.name,
    external_id: input.external_id ?? null,
    email: input.email ?? null,
    domain: input.domain ?? null,
    country: input.country ?? null,
    address: input.address ?? null,
    registration_number: input.registration_number ?? null,
    payment_terms_days: input.payment_terms_days ?? null,
    tax_id: input.tax_id ?? null,
    invoice_memo: input.invoice_memo ?? null,
    invoice_delivery: input.invoice_delivery ?? "none",
    created_at: clock.now(),
    updated_at: null,
  };
  requireEmailForDelivery(row);
  const inserted = await repo.insertCustomerUnlessExternalIdTaken(tx, row);
  if (!inserted) {
    const existing = await repo.findCustomerByExternalId(tx, row.external_id!);
    throw new ConflictError(externalIdTaken(row.external_id!).message, "customer_exists", {
      customer: existing ? presentCustomer(existing) : undefined,
    });
  }
  const customer = presentCustomer(inserted);
  await recordEvent(tx, clock, "customer.created", customer);
  return customer;
}

/** Invoices are emailed only to a customer that has an email address. */
function requireEmailForDelivery(row: Pick<repo.CustomerRow, "invoice_delivery" | "email">): void {
  if (row.invoice_delivery === "email" && row.email === null) {
    throw new ValidationError("invoice_delivery is email but the customer has no email", "email_required", [
      { path: "email", message: "required when invoice_delivery is email" },
    ]);
  }
}

const externalIdTaken = (externalId: string) =>
  new ConflictError(`A customer with external_id '${externalId}' already exists`, "customer_exists");

/**
 * One of the company's customers by id, or undefined (an id that is not a UUID names none): for the customer's
 * own API and for the modules that refer to a customer (a contract names its customer).
 */
export async function findCustomer(scope: CompanyScope, id: string): Promise<Customer | undefined> {
  const row = isUuid(id) ? await repo.findCustomerById(scope, id) : undefined;
  return row && presentCustomer(row);
}

export function createCustomerService({ clock }: { clock: Clock }) {
  return {
    /**
     * Creates a customer and its `customer.created` event in one transaction. Customers are never matched
     * by name; an `external_id` the company already uses answers 409 with the existing customer.
     */
    async create(tenant: Tenancy, input: CreateCustomerInput): Promise<Customer> {
      requireScope(tenant, "customers:write", "usage:write");
      return tenant.transaction((tx) => insertCustomer(tx, clock, input));
    },

    async list(
      tenant: Tenancy,
      filter: { externalId?: string | undefined; search?: string | undefined },
      page: PageRequest,
    ): Promise<Page<Customer>> {
      requireScope(tenant, "customers:read", "usage:write");
      let after: repo.CustomerRow | undefined;
      if (page.startingAfter !== undefined) {
        after = isUuid(page.startingAfter) ? await repo.findCustomerById(tenant.data, page.startingAfter) : undefined;
        if (!after) throw new ValidationError("starting_after does not name a customer of this list", "invalid_cursor");
      }
      const rows = await repo.listCustomers(tenant.data, filter, after, page.limit);
      const result = toPage(rows, page.limit);
      return { items: result.items.map(presentCustomer), hasMore: result.hasMore };
    },

    async get(tenant: Tenancy, id: string): Promise<Customer> {
      requireScope(tenant, "customers:read", "usage:write");
      const customer = await findCustomer(tenant.data, id);
      if (!customer) throw new NotFoundError("customer");
      return customer;
    },

    /**
     * Changes a customer: the fields sent, `null` clearing an optional one. Its issued invoices keep the terms,
     * addresses and memo they were issued with. Another customer's external_id is a 409 `customer_exists`.
     */
    async update(tenant: Tenancy, id: string, input: UpdateCustomerInput): Promise<Customer> {
      requireScope(tenant, "customers:write");
      return tenant.transaction(async (tx) => {
        const current = isUuid(id) ? await repo.lockCustomer(tx, id) : undefined;
        if (!current) throw new NotFoundError("customer");
        const changes: repo.CustomerChanges = {};
        for (const [key, value] of Object.entries(input) as [keyof repo.CustomerChanges, unknown][]) {
          if (value !== undefined) (changes as Record<string, unknown>)[key] = value;
        }
        requireEmailForDelivery({ ...current, ...changes });
        if (Object.keys(changes).length === 0) return presentCustomer(current);
        const updated = await repo.updateCustomer(tx, id, changes, clock.now());
        if (!updated) throw externalIdTaken(String(changes.external_id));
        return presentCustomer(updated);
      });
    },
  };
}
