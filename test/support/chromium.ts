// What the system tier's browser suites share (docs/testing.md): Debian's Chromium, how it is started, when a
// suite without it is skipped, and a free port for a service to listen on.
import { existsSync } from "node:fs";
import { createServer } from "node:net";
import { chromium, type Browser } from "playwright-core";

const CHROMIUM = "/usr/bin/chromium";

/** Headless, in this container (no sandbox, no GPU), asking nothing of the network on its own. */
const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--disable-quic",
  "--no-first-run",
];

const inCi = !!process.env.CI && !/^(0|false|no)$/i.test(process.env.CI);

/**
 * A browser suite's `skip`: the reason when Chromium is missing on a developer's machine; false when it is there,
 * and under CI, where a missing browser must fail the suite (.ci/run installs it).
 */
export const chromiumSkip: string | false =
  !existsSync(CHROMIUM) && !inCi
    ? `${CHROMIUM} is not installed (apt-get install -y chromium); set CI=1 to make this a failure instead of a skip`
    : false;

/**
 * Starts Debian's Chromium (launch() gives it an empty --user-data-dir of its own, removed on close). Missing
 * under CI (the only way a suite gets here without it), it fails the suite, naming the install step.
 */
export async function launchChromium(timeout = 30_000): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing and CI is set: .ci/run installs it`);
  return chromium.launch({ executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, timeout });
}

/** A port nothing listens on right now (the OS picks it). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.on("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
}
