// A child of the child pool's own tests (src/platform/child-pool.test.ts): jobs that answer, fail, wait until the
// test lets them go, spin, grow or die, so that every path of the pool is driven without timing.
import { connect } from "node:net";
import { serveChildJobs } from "../../src/platform/child-jobs.js";

const kept: Buffer[] = [];

serveChildJobs({
  echo: (input: unknown) => input,
  fail: () => {
    throw new Error("the job refused");
  },
  pid: () => process.pid,
  /** Connects to the test's socket, says its tag, and answers when the test writes back. */
  hold: ({ socket, tag }: { socket: string; tag: string }) =>
    new Promise<string>((resolve) => {
      const client = connect(socket, () => client.write(tag));
      client.once("data", () => {
        client.end();
        resolve(tag);
      });
    }),
  spin: () => {
    for (;;) Math.sqrt(Math.random());
  },
  /** 4 MiB more every 10 ms, touched, until the pool stops it. */
  grow: async () => {
    for (;;) {
      kept.push(Buffer.alloc(4 * 1024 * 1024, 1));
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
  },
  exit: () => process.exit(3),
});
