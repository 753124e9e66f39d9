import type { Database } from "../db/database.js";
import { createAccessService } from "./access/access-service.js";
import { createCustomerService } from "./customers/customer-service.js";
import type { Clock } from "./kernel/clock.js";

export interface ServiceDeps {
  db: Database;
  clock: Clock;
  publicUrl: string;
}

/** The one object every surface (HTTP, MCP, worker, dashboard, CLI) uses. */
export function createServices(deps: ServiceDeps) {
  return {
    access: createAccessService(deps),
    customers: createCustomerService(deps),
  };
}

export type Services = ReturnType<typeof createServices>;
