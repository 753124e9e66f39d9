/**
 * `npm run bench:uploads`: upload fairness (docs/performance.md, "Upload fairness"). Company B uploads a valid
 * agreement alone, then right behind company A's 15 decompression bombs sent at once (A's uploads past its
 * cap are refused 429 at once; the ones queued are read one at a time, in turn with B's). The target: B's
 * upload behind the bombs within 2× of alone.
 *
 * Environment: BENCH_DATABASE_URL (default postgres://postgres@127.0.0.1:5432/postgres), BENCH_ROUNDS
 * (default 3), BENCH_SERVICE=tsx (run the service from source instead of dist/).
 */
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, writeFileSync } from "node:fs";
import { bombPdf, generatedAgreement, uploadTerms } from "../test/support/uploads.js";
import {
  companyWithKey,
  createDatabase,
  dropDatabase,
  machine,
  percentile,
  postPdf,
  startService,
} from "./bench-kit.js";

const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const BOMBS = 15;
const API_KEY = `sk_bench_${randomBytes(12).toString("hex")}`;
const ADMIN_TOKEN = randomBytes(24).toString("hex");

const round = (n: number) => Math.round(n);
const median = (values: number[]) =>
  percentile(
    [...values].sort((a, b) => a - b),
    50,
  );

/** One upload over HTTP, as a client sends it; its status, code and time. */
async function upload(port: number, key: string, pdf: Buffer): Promise<{ status: number; code?: string; ms: number }> {
  const answer = await postPdf(port, key, "/v1/billing/contracts/upload", pdf, {
    terms: JSON.stringify(uploadTerms()),
  });
  return { status: answer.status, code: answer.body.code as string | undefined, ms: answer.ms };
}

async function main(): Promise<void> {
  if (process.env.BENCH_SERVICE !== "tsx") {
    const build = spawnSync("npm", ["run", "--silent", "build"], { stdio: "inherit" });
    if (build.status !== 0) throw new Error("build failed");
  }
  const name = `billing_bench_uploads_${Date.now().toString(36)}`;
  const url = await createDatabase(name);
  const service = await startService({ DATABASE_URL: url, BILLING_ADMIN_TOKEN: ADMIN_TOKEN }, API_KEY);
  try {
    const keyB = await companyWithKey(service.port, ADMIN_TOKEN, "Company B");
    const keyA = API_KEY; // the bootstrap company
    const valid = await generatedAgreement();
    const bomb = bombPdf(1024 * 1024 * 1024, { into: "page" });

    // Warm-up: the first child process of a service pays for loading pdfjs from a cold disk cache.
    await upload(service.port, keyB, valid);
    const alone: number[] = [];
    const behind: number[] = [];
    const bombAnswers: Record<string, number> = {};
    for (let i = 0; i < ROUNDS; i++) {
      const a = await upload(service.port, keyB, valid);
      if (a.status !== 201) throw new Error(`B alone answered ${a.status} ${a.code}`);
      alone.push(a.ms);

      // A's bombs, all at once; B's upload as soon as A's refusals came back (A's queue is full then).
      const bombs = Array.from({ length: BOMBS }, () => upload(service.port, keyA, bomb));
      await Promise.race(bombs);
      const b = await upload(service.port, keyB, valid);
      if (b.status !== 201) throw new Error(`B behind the bombs answered ${b.status} ${b.code}`);
      behind.push(b.ms);
      for (const answer of await Promise.all(bombs))
        bombAnswers[`${answer.status} ${answer.code}`] = (bombAnswers[`${answer.status} ${answer.code}`] ?? 0) + 1;
    }
    const ratio = median(behind) / median(alone);
    const results = {
      date: new Date().toISOString(),
      machine: machine(),
      rounds: ROUNDS,
      bombsPerRound: BOMBS,
      aloneMs: alone.map(round),
      behindBombsMs: behind.map(round),
      medianAloneMs: round(median(alone)),
      medianBehindMs: round(median(behind)),
      ratio: Math.round(ratio * 100) / 100,
      bombAnswers,
      peakServiceRssMb: service.peakRssMb(),
    };
    console.log(JSON.stringify(results, null, 2));
    console.log(
      `B's valid upload: ${results.medianAloneMs} ms alone, ${results.medianBehindMs} ms behind ${BOMBS} of A's bombs: ${results.ratio}× (target ≤ 2×)`,
    );
    mkdirSync("bench/results", { recursive: true });
    writeFileSync(
      `bench/results/uploads-${new Date().toISOString().slice(0, 19).replace(/:/g, "-")}.json`,
      `${JSON.stringify(results, null, 2)}\n`,
    );
  } finally {
    await service.stop();
    await dropDatabase(name);
  }
}

await main();
