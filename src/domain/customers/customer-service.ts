import type { Tenancy } from "../kernel/tenancy.js";
import { type CompanyScope, forCompany } from "../../db/company-scope.js";
import type { Database, Queryable, Tx } from "../../db/database.js";
import { requireScope } from "../kernel/actor.js";
import type { Clock } from "../kernel/clock.js";
import { ConflictError, NotFoundError, ValidationError } from "../kernel/errors.js";
import { isUuid, newId } from "../kernel/ids.js";
import { toPage, type Page, type PageRequest } from "../kernel/pagination.js";
import { recordEvent } from "../webhooks/outbox.js";
import * as repo from "./customer-repository.js";
import { paymentTermsDays, type CreateCustomerInput, type Customer } from "./customer-schemas.js";

function presentCustomer(row: repo.CustomerRow): Customer {
  const days = paymentTermsDays(row.payment_terms);
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
    payment_terms: row.payment_terms,
    created_at: row.created_at.toISOString(),
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
    payment_terms: input.payment_terms_days === undefined ? null : `Net ${input.payment_terms_days}`,
    created_at: clock.now(),
  };
  const inserted = await repo.insertCustomerUnlessExternalIdTaken(tx, row);
  if (!inserted) {
    const existing = await repo.findCustomerByExternalId(tx, row.external_id!);
    throw new ConflictError(`A customer with external_id '${row.external_id}' already exists`, "customer_exists", {
      customer: existing ? presentCustomer(existing) : undefined,
    });
  }
  const customer = presentCustomer(inserted);
  await recordEvent(tx, clock, "customer.created", customer);
  return customer;
}

/**
 * One of the company's customers by id, or undefined (an id that is not a UUID names none): for the customer's
 * own API and for the modules that refer to a customer (a contract names its customer).
 */
export async function findCustomer(scope: CompanyScope, id: string): Promise<Customer | undefined> {
  const row = isUuid(id) ? await repo.findCustomerById(scope, id) : undefined;
  return row && presentCustomer(row);
}

export function createCustomerService({ db, clock }: { db: Database; clock: Clock }) {
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
      filter: { externalId?: string | undefined },
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
  };
}
