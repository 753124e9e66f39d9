import { z } from "zod";

/**
 * Strings an answer carries in a known format, so that the OpenAPI document can say so (`format`). They
 * annotate only: the service writes these values itself, and the response serializer does not check them.
 */
export const dateText = () => z.string().meta({ format: "date" }); // YYYY-MM-DD
export const instantText = () => z.string().meta({ format: "date-time" }); // ISO 8601, UTC
export const emailText = () => z.string().meta({ format: "email" });
export const urlText = () => z.string().meta({ format: "uri" });
