import type { Database } from "../../db/database.js";
import type { Clock } from "../kernel/clock.js";
import { clientMetadataProblem } from "./client-metadata.js";
import { OAuthProtocolError, storable } from "./oauth-protocol.js";
import * as repo from "./oauth-repository.js";

/** Dynamic client registration (RFC 7591): public clients only, within the limits of client-metadata.ts. */
export function createOAuthClients({ db, clock }: { db: Database; clock: Clock }) {
  return {
    async registerClient(metadata: Record<string, unknown> & { client_id: string }): Promise<void> {
      const problem = clientMetadataProblem(metadata);
      if (problem) throw new OAuthProtocolError(problem.code, problem.message);
      storable("client_id", metadata.client_id);
      await repo.insertClient(db, { client_id: metadata.client_id, metadata, created_at: clock.now() });
    },

    async getClient(clientId: string): Promise<Record<string, unknown> | undefined> {
      storable("client_id", clientId);
      return (await repo.findClient(db, clientId))?.metadata;
    },
  };
}
