// The child's end of a child pool (child-pool.ts): one request at a time, { id, kind, input }, answered by the
// handler of its kind, { id, ok: true, value } or { id, ok: false, message }. A child whose parent is gone
// exits (the IPC channel closes), so no child outlives the service.

export interface ChildRequest {
  id: number;
  kind: string;
  input: unknown;
}

export type ChildReply =
  | { id: number; ok: true; value: unknown }
  | { id: number; ok: false; message: string }
  /** Sent once, when the child has loaded its modules: its start-up is not counted in a job's CPU budget. */
  | { ready: true };

// biome-ignore lint/suspicious/noExplicitAny: each handler takes its own input, checked by its caller's types
type Handlers = Record<string, (input: any) => unknown>;

/** Serves the pool's requests in this process with `handlers`, one per kind of job. */
export function serveChildJobs(handlers: Handlers): void {
  const send = (reply: ChildReply) => process.send?.(reply);
  process.on("message", async (request: ChildRequest) => {
    const handler = Object.hasOwn(handlers, request.kind) ? handlers[request.kind] : undefined;
    try {
      if (!handler) throw new Error(`no job of kind ${JSON.stringify(request.kind)}`);
      send({ id: request.id, ok: true, value: await handler(request.input) });
    } catch (error) {
      send({ id: request.id, ok: false, message: error instanceof Error ? error.message : String(error) });
    }
  });
  process.on("disconnect", () => process.exit(0));
  send({ ready: true });
}
