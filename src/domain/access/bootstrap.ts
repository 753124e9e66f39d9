import type { Database } from "../../db/database.js";
import type { Clock } from "../kernel/clock.js";
import { ConflictError } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import { checkUser } from "./access-checks.js";
import * as repo from "./access-repository.js";
import { createCompanyRecord } from "../account/company-records.js";
import { insertApiKey } from "./api-keys.js";
import { hashApiKey } from "./api-key-secret.js";
import { presentCompany, type Company } from "./companies.js";
import { hashPassword, passwordMatches } from "./passwords.js";

/** The operator's start-up bootstrap (docs/operations.md, "Operators and bootstrap"). */
export function createBootstrap({ db, clock }: { db: Database; clock: Clock }) {
  return {
    /**
     * Bootstrap: a company with this name exists and this exact key is one of its full-access keys.
     * Idempotent, and safe when several processes start together.
     */
    async bootstrap(
      companyName: string,
      key: string,
      user?: { email: string; password: string },
    ): Promise<{ company: Company; createdKey: boolean; user?: { email: string; created: boolean } }> {
      // Checked and hashed before the lock is taken: argon2 costs ~30 ms, and a bad email must not get in.
      const email = user ? checkUser(user.email, user.password) : undefined;
      return db.transaction(async (tx) => {
        await repo.lockBootstrap(tx);
        let company = await repo.findOldestCompanyByName(tx, companyName);
        if (!company) {
          company = { id: newId(), name: companyName, created_at: clock.now() };
          await createCompanyRecord(tx, company);
        }
        const existing = await repo.findApiKeyByHash(tx, hashApiKey(key));
        if (existing && existing.company_id !== company.id) {
          throw new ConflictError("BILLING_BOOTSTRAP_API_KEY already belongs to another company", "bootstrap_conflict");
        }
        if (!existing) await insertApiKey(tx, clock, company.id, key, { name: "bootstrap" });
        const result = { company: presentCompany(company), createdKey: !existing };
        if (!user || email === undefined) return result;
        // The user signs in to this company with this password: created once, its password set back to the
        // configured one when it differs (the environment is what the operator means).
        const found = await repo.findUserByEmail(tx, email);
        if (found && found.company_id !== company.id) {
          throw new ConflictError("BILLING_BOOTSTRAP_EMAIL already signs in to another company", "bootstrap_conflict");
        }
        if (!found) {
          const row: repo.UserRow = {
            id: newId(),
            company_id: company.id,
            email,
            password_hash: await hashPassword(user.password),
            created_at: clock.now(),
          };
          await repo.insertUser(tx, row);
          return { ...result, user: { email, created: true } };
        }
        if (!(await passwordMatches(found.password_hash, user.password))) {
          await repo.setUserPassword(tx, found.id, await hashPassword(user.password), clock.now());
        }
        return { ...result, user: { email, created: false } };
      });
    },
  };
}
