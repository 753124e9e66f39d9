import type { Tenancy } from "../../kernel/tenancy.js";
import type { RejectionCode, SubmitResult } from "../usage-schemas.js";

/** What the answer says of one entry of a batch. `differs` of a duplicate: whether its copy differs from the stored event, once known. */
export type Outcome =
  | { kind: "accepted"; duplicate: boolean; differs?: boolean }
  | { kind: "rejected"; code: RejectionCode; message: string };

export const ACCEPTED: Outcome = { kind: "accepted", duplicate: false };
export const DUPLICATE: Outcome = { kind: "accepted", duplicate: true };

/** An entry's decision by one stage: the entry's position in the batch and its outcome. */
export type Decisions = ReadonlyMap<number, Outcome>;

/**
 * A stage of ingestion: takes the batch as the stages before it left it, hands its own value to the next stage
 * and passes back the next stage's answer. The stages are chained once, back to front (ingest-usage.ts), so an
 * event's walk goes forward from stage to stage and never back to a stage it has left.
 */
export type Stage<T> = (tenant: Tenancy, batch: T) => Promise<SubmitResult>;
