import type { Database } from "../../db/database.js";
import type { Clock } from "../kernel/clock.js";
import { ConflictError, NotFoundError } from "../kernel/errors.js";
import { newId } from "../kernel/ids.js";
import { checkName, checkUser } from "./access-checks.js";
import * as repo from "./access-repository.js";
import { createCompanyRecord } from "../account/company-records.js";
import { findCompany } from "./companies.js";
import { dummyHash, hashPassword, passwordMatches } from "./passwords.js";

export interface User {
  object: "user";
  id: string;
  email: string;
  company_id: string;
}

const presentUser = (row: repo.UserRow): User => ({
  object: "user",
  id: row.id,
  email: row.email,
  company_id: row.company_id,
});

/** Dashboard users: sign-up (with its company), a user added by an operator, and the password check of sign-in. */
export function createUsers({ db, clock }: { db: Database; clock: Clock }) {
  return {
    /**
     * Dashboard sign-up: a new company and its owner, in one transaction (an email already taken leaves no
     * company behind).
     */
    async signUp(input: { companyName: string; email: string; password: string }): Promise<User> {
      const companyName = checkName("company name", input.companyName, "company");
      const email = checkUser(input.email, input.password);
      const passwordHash = await hashPassword(input.password);
      return db.transaction(async (tx) => {
        const company = { id: newId(), name: companyName, created_at: clock.now() };
        await createCompanyRecord(tx, company);
        const user: repo.UserRow = {
          id: newId(),
          company_id: company.id,
          email,
          password_hash: passwordHash,
          created_at: clock.now(),
        };
        if (!(await repo.insertUser(tx, user)))
          throw new ConflictError("A user with this email already exists", "email_taken");
        return presentUser(user);
      });
    },

    async createUser(companyId: string, email: string, password: string): Promise<User> {
      const normalizedEmail = checkUser(email, password);
      if (!(await findCompany(db, companyId))) throw new NotFoundError("company");
      const row: repo.UserRow = {
        id: newId(),
        company_id: companyId,
        email: normalizedEmail,
        password_hash: await hashPassword(password),
        created_at: clock.now(),
      };
      if (!(await repo.insertUser(db, row)))
        throw new ConflictError("A user with this email already exists", "email_taken");
      return presentUser(row);
    },

    /** The user whose email and password match, or undefined. Runs the hash even for unknown emails (no timing oracle). */
    async verifyUserPassword(email: string, password: string): Promise<User | undefined> {
      const row = await repo.findUserByEmail(db, email.trim().toLowerCase());
      const hashToCheck = row?.password_hash ?? (await dummyHash());
      const ok = await passwordMatches(hashToCheck, password);
      if (!row || !ok) return undefined;
      return presentUser(row);
    },
  };
}
