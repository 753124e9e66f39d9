import type { RejectionCode } from "../usage-schemas.js";

/** What the answer says of one entry of a batch. `differs` of a duplicate: whether its copy differs from the stored event, once known. */
export type Outcome =
  | { kind: "accepted"; duplicate: boolean; differs?: boolean }
  | { kind: "rejected"; code: RejectionCode; message: string };

export const ACCEPTED: Outcome = { kind: "accepted", duplicate: false };
export const DUPLICATE: Outcome = { kind: "accepted", duplicate: true };

/** An entry's decision by one stage: the entry's position in the batch and its outcome. */
export type Decisions = ReadonlyMap<number, Outcome>;
