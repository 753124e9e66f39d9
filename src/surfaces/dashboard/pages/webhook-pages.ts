import type { FastifyInstance } from "fastify";
import type { DashboardDeps } from "../dashboard-app.js";

// Placeholder: a helper is writing these pages.
export async function webhookPages(_app: FastifyInstance, _deps: DashboardDeps): Promise<void> {}
