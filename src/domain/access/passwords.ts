import { randomBytes } from "node:crypto";
import { hash as argonHash, verify as argonVerify } from "@node-rs/argon2";

// argon2id with OWASP's second recommended profile (19 MiB, 2 passes): memory-hard, ~30 ms here.
const ARGON_OPTIONS = { memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

export const hashPassword = (password: string): Promise<string> => argonHash(password, ARGON_OPTIONS);

/** Whether `password` is the one `hash` was made from; a malformed hash matches nothing. */
export const passwordMatches = (hash: string, password: string): Promise<boolean> =>
  argonVerify(hash, password).catch(() => false);

// A real argon2id hash of a random string, verified against when the email is unknown, so that an
// unknown email costs as much as a wrong password.
let dummyHashPromise: Promise<string> | undefined;
export const dummyHash = () => (dummyHashPromise ??= hashPassword(randomBytes(16).toString("hex")));
