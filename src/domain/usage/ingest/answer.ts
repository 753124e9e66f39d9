import type { SubmitResult } from "../usage-schemas.js";
import type { Outcome } from "./outcome.js";

/** The last stage: the response, one entry per event in request order. */
export function answer(outcomes: readonly Outcome[], eventIds: readonly (string | null)[]): SubmitResult {
  let accepted = 0;
  const events = outcomes.map((outcome, index) => {
    const eventId = eventIds[index] ?? null;
    if (outcome.kind === "accepted") {
      accepted += 1;
      // An accepted entry was parsed, so it has its id. `differs` only when true, so that an honest retry's
      // answer is what it always was.
      const id = eventId ?? "";
      return outcome.differs
        ? { event_id: id, status: "accepted" as const, duplicate: true, differs: true }
        : { event_id: id, status: "accepted" as const, duplicate: outcome.duplicate };
    }
    return { event_id: eventId, status: "rejected" as const, error: { code: outcome.code, message: outcome.message } };
  });
  return { accepted, rejected: outcomes.length - accepted, events };
}
