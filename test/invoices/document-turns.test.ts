/**
 * Documents are made in the document processes, each company in its turn (docs/architecture.md, "Documents off
 * the main thread"), on both engines: one company's many PDFs do not hold another company's one PDF behind them,
 * a company past its bound is answered 429 `too_many_documents` with Retry-After (the API, the hosted page), a
 * document process that dies is replaced for the next PDF, and the mail worker, finding its company's turn full,
 * waits its turn (its attempt given back) and then sends the invoice with its PDF. A company's turn is held with
 * the pool's own `hold` and the queue read with its `load()`: no sleeps, no wall-clock budgets.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, it } from "node:test";
import { documentTurns } from "../../src/domain/documents/document-pool.js";
import {
  INVOICES,
  createCustomer,
  createSampleContract,
  invoiceFor,
  submitAccepted,
  usageEvent,
} from "../support/api.js";
import { expectError, expectStatus, waitFor } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { startSmtpReceiver, type SmtpReceiver } from "../support/smtp-receiver.js";

const MARCH_1 = new Date("2026-03-01T08:00:00.000Z");
const ISSUE_DAY = new Date("2026-04-06T09:30:00.000Z");
const pdfUrl = (number: string) => `${INVOICES}/${encodeURIComponent(number)}/pdf`;

/** A company with an issued invoice for a customer billed by email. */
async function issuedInvoice(t: TestApp) {
  t.clock.set(MARCH_1);
  const { key, companyId } = await t.newCompany();
  const email = `ap-${randomBytes(4).toString("hex")}@customer.test`;
  const customer = await createCustomer(t, key, { name: "Globex Corporation", email, invoice_delivery: "email" });
  const contract = await createSampleContract(t, key, customer.id);
  await submitAccepted(t, key, [usageEvent(contract.id, { quantity: 4 })]);
  const draft = await invoiceFor(t, key, contract.id);
  t.clock.set(ISSUE_DAY);
  const issued = await t.call({ method: "POST", url: `${INVOICES}/${encodeURIComponent(draft.number)}/finalize`, key });
  expectStatus(issued, 200);
  return { key, companyId, email, number: draft.number as string, hostedUrl: issued.json().hosted_url as string };
}

/** Holds `count` of the company's turns: the first runs (without a child), the rest wait behind it. */
async function holdTurns(companyId: string, count: number) {
  const turns = Array.from({ length: count }, () => documentTurns.hold(companyId));
  await turns[0]!.started;
  return () => turns.forEach((turn) => turn.release());
}

describeEachEngine("document turns", (test) => {
  it("makes another company's one PDF while one company's many wait; refuses the company past its bound with 429 too_many_documents", async () => {
    const t = test();
    const a = await issuedInvoice(t);
    const b = await issuedInvoice(t);
    const expected = await t.call({ method: "GET", url: pdfUrl(a.number), key: a.key });
    expectStatus(expected, 200);

    const releaseA = await holdTurns(a.companyId, 1);
    const waiting = documentTurns.load().waiting;
    const queued = [1, 2, 3].map(() => t.call({ method: "GET", url: pdfUrl(a.number), key: a.key }));
    await waitFor("A's three PDFs wait in A's turn", () => documentTurns.load().waiting === waiting + 3);

    const other = await t.call({ method: "GET", url: pdfUrl(b.number), key: b.key });
    expectStatus(other, 200);
    assert.equal(other.headers["content-type"], "application/pdf");
    assert.equal(documentTurns.load().waiting, waiting + 3, "B's PDF was made while all of A's still waited");

    // A has 4 documents running or waiting: the next is refused at once, on the API and on the hosted page.
    const refused = await t.call({ method: "GET", url: pdfUrl(a.number), key: a.key });
    const error = expectError(refused, 429, "too_many_documents");
    assert.match(error.error, /Your company already has 4 documents being made/);
    assert.equal(refused.headers["retry-after"], "2");
    const hosted = await t.call({ method: "GET", url: `${new URL(a.hostedUrl).pathname}/pdf` });
    expectError(hosted, 429, "too_many_documents");
    assert.equal(hosted.headers["retry-after"], "2");

    releaseA();
    for (const res of await Promise.all(queued)) {
      expectStatus(res, 200);
      assert.ok(res.rawPayload.equals(expected.rawPayload), "the same bytes as before");
    }
  });

  it("replaces a document process that dies: the next PDF is made", async () => {
    const t = test();
    const a = await issuedInvoice(t);
    expectStatus(await t.call({ method: "GET", url: pdfUrl(a.number), key: a.key }), 200);
    const pids = documentTurns.pids();
    assert.ok(pids.length > 0, "a document process runs");
    for (const pid of pids) process.kill(pid, "SIGKILL");
    await waitFor("the killed processes are gone from the pool", () =>
      documentTurns.pids().every((pid) => !pids.includes(pid)),
    );
    const res = await t.call({ method: "GET", url: pdfUrl(a.number), key: a.key });
    expectStatus(res, 200);
    assert.equal(res.rawPayload.subarray(0, 5).toString("latin1"), "%PDF-");
    assert.ok(
      documentTurns.pids().some((pid) => !pids.includes(pid)),
      "by a new process",
    );
  });
});

let smtp: SmtpReceiver;
before(async () => {
  smtp = await startSmtpReceiver();
});
after(async () => {
  await smtp.close();
});

describeEachEngine(
  "document turns and the mail worker",
  (test) => {
    it("waits its turn when its company's documents are full, without counting an attempt, then sends the PDF", async () => {
      const t = test();
      smtp.mode = "accept";
      const a = await issuedInvoice(t);
      const messages = async () =>
        (
          await t.call({ method: "GET", url: `${INVOICES}/${encodeURIComponent(a.number)}/messages`, key: a.key })
        ).json().data as { status: string; attempts: number; last_error: string | null }[];

      const release = await holdTurns(a.companyId, 4);
      await t.app.mailWorker.drain();
      const [waiting] = await messages();
      assert.equal(waiting?.status, "queued");
      assert.equal(waiting?.attempts, 0, "the refused turn is not an attempt");
      assert.equal(waiting?.last_error, null);
      assert.equal(smtp.received.filter((m) => JSON.stringify(m.to).includes(a.email)).length, 0);

      release();
      t.clock.advance(5_000);
      await t.app.mailWorker.drain();
      const [sent] = await messages();
      assert.equal(sent?.status, "sent");
      assert.equal(sent?.attempts, 1);
      const [mail] = smtp.received.filter((m) => JSON.stringify(m.to).includes(a.email));
      assert.ok(mail, "the SMTP server received the invoice");
      const pdf = await t.call({ method: "GET", url: pdfUrl(a.number), key: a.key });
      assert.ok(mail.attachments[0]!.content.equals(pdf.rawPayload), "with the PDF endpoint's bytes attached");
    });
  },
  {
    env: () => ({
      BILLING_SMTP_URL: smtp.url,
      BILLING_MAIL_FROM: "Northwind Billing <billing@seller.test>",
      BILLING_SMTP_TIMEOUT: "1s",
      BILLING_MAIL_RETRY_SCHEDULE: "1m,5m",
    }),
  },
);
