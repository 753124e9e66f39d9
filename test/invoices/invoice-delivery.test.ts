/**
 * Invoices delivered by email, on both engines (docs/api.md, "Delivery"): a real SMTP server of the test's own
 * (smtp-server) receives what the mail worker sends, read back with mailparser. Issuing queues the email in the
 * same transaction; the worker sends it with the PDF attached (the same bytes as GET …/pdf), retries what the
 * server refuses, gives up after the schedule, and never hangs on a server that stops answering. Reminders go
 * around the due date while the invoice is unpaid; the hosted page answers its token, and 404 to any other.
 */
import assert from "node:assert/strict";
import { randomBytes } from "node:crypto";
import { after, before, it } from "node:test";
import { formatMoney } from "../../src/domain/kernel/money-format.js";
import {
  INVOICES,
  createCustomer,
  createSampleContract,
  invoiceFor,
  pathOf,
  submitAccepted,
  usageEvent,
} from "../support/api.js";
import { expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { startSmtpReceiver, type SmtpReceiver } from "../support/smtp-receiver.js";

const MARCH_1 = new Date("2026-03-01T08:00:00.000Z");
/** Issued on April 6 at Net 30: due May 6. */
const ISSUE_DAY = new Date("2026-04-06T09:30:00.000Z");
/** The due date as documents write it (en-US, the default locale), with the terms it was issued with. */
const DUE = "May 6, 2026";
const SELLER = "Northwind Payments";

const at = (day: string) => new Date(`${day}T10:00:00.000Z`);

let smtp: SmtpReceiver;
before(async () => {
  smtp = await startSmtpReceiver();
});
after(async () => {
  await smtp.close();
});

interface Message {
  id: string;
  kind: string;
  reminder_day: number | null;
  to: string | null;
  status: string;
  attempts: number;
  last_error: string | null;
  sent_at: string | null;
}

const invoiceUrl = (number: string, rest = "") => `${INVOICES}/${encodeURIComponent(number)}${rest}`;

/** A draft for a customer with the given delivery, in a company of its own whose legal name is SELLER. */
async function draftFor(
  t: TestApp,
  delivery: "email" | "none",
  email: string | null = `ap-${randomBytes(4).toString("hex")}@customer.test`,
) {
  t.clock.set(MARCH_1);
  const { key, companyId } = await t.newCompany();
  expectStatus(
    await t.call({ method: "PATCH", url: "/v1/billing/account", key, payload: { legal_name: SELLER } }),
    200,
  );
  const customer = await createCustomer(t, key, {
    name: "Globex Corporation",
    ...(email ? { email } : {}),
    invoice_delivery: delivery,
    payment_terms_days: 30,
  });
  const contract = await createSampleContract(t, key, customer.id);
  await submitAccepted(t, key, [usageEvent(contract.id, { quantity: 4 })]);
  const draft = await invoiceFor(t, key, contract.id);
  t.clock.set(ISSUE_DAY);
  return { key, companyId, email, number: draft.number };
}

async function issuedFor(t: TestApp, delivery: "email" | "none" = "email", email?: string | null) {
  const draft = await draftFor(t, delivery, email);
  const res = await t.call({ method: "POST", url: invoiceUrl(draft.number, "/finalize"), key: draft.key });
  expectStatus(res, 200);
  return { ...draft, invoice: res.json() };
}

async function messagesOf(t: TestApp, key: string, number: string): Promise<Message[]> {
  const res = await t.call({ method: "GET", url: invoiceUrl(number, "/messages"), key });
  expectStatus(res, 200);
  return res.json().data;
}

const mailsTo = (address: string) => smtp.received.filter((m) => m.to && JSON.stringify(m.to).includes(address));

describeEachEngine(
  "invoice delivery by email",
  (test) => {
    it("issuing queues the email in the same transaction; the worker sends it with the PDF attached", async () => {
      const t = test();
      smtp.mode = "accept";
      const { key, number, email, invoice } = await issuedFor(t);
      assert.match(invoice.hosted_url, /^http:\/\/localhost:8080\/i\/[A-Za-z0-9_-]{43}$/);
      // Queued by the finalize, not sent by it: the request never waits on SMTP.
      const queued = await messagesOf(t, key, number);
      assert.equal(queued.length, 1);
      assert.deepEqual(
        { kind: queued[0]!.kind, to: queued[0]!.to, status: queued[0]!.status, attempts: queued[0]!.attempts },
        { kind: "issued", to: email, status: "queued", attempts: 0 },
      );
      assert.equal(mailsTo(email!).length, 0);

      await t.app.mailWorker.drain();
      const [mail, ...more] = mailsTo(email!);
      assert.ok(mail, "the SMTP server received the invoice");
      assert.equal(more.length, 0);
      assert.equal(mail.subject, `Invoice ${number} from ${SELLER}`);
      assert.equal(mail.to && !Array.isArray(mail.to) ? mail.to.value[0]?.address : undefined, email);
      assert.equal(mail.from?.value[0]?.address, "billing@seller.test");
      // Money as the PDF writes it, by the one formatter: "$1,200.00", never "1200.00 USD".
      const due = formatMoney(Number(invoice.total).toFixed(2), "USD");
      for (const part of [mail.text ?? "", String(mail.html)]) {
        assert.ok(part.includes(invoice.hosted_url), "the hosted link");
        assert.ok(part.includes(due), `the amount due ${due}`);
        assert.ok(!part.includes(" USD"), "no amount written as 1200.00 USD");
        assert.ok(part.includes(DUE), "the due date");
      }
      const pdf = await t.call({ method: "GET", url: invoiceUrl(number, "/pdf"), key });
      expectStatus(pdf, 200);
      assert.equal(mail.attachments.length, 1);
      assert.equal(mail.attachments[0]!.filename, `${number}.pdf`);
      assert.equal(mail.attachments[0]!.contentType, "application/pdf");
      assert.ok(mail.attachments[0]!.content.equals(pdf.rawPayload), "the attachment is the PDF endpoint's bytes");

      const [sent] = await messagesOf(t, key, number);
      assert.equal(sent!.status, "sent");
      assert.equal(sent!.attempts, 1);
      assert.equal(sent!.sent_at, ISSUE_DAY.toISOString());
      assert.equal(sent!.last_error, null);
    });

    it("a customer without email delivery gets no message; a resend queues one; drafts and void invoices are refused", async () => {
      const t = test();
      smtp.mode = "accept";
      const draft = await draftFor(t, "none");
      const send = (key: string, number: string) => t.call({ method: "POST", url: invoiceUrl(number, "/send"), key });
      expectError(await send(draft.key, draft.number), 409, "invoice_is_draft");
      const revoke = await t.call({
        method: "POST",
        url: invoiceUrl(draft.number, "/hosted-link/revoke"),
        key: draft.key,
      });
      expectError(revoke, 409, "invoice_is_draft");
      const got = await t.call({ method: "GET", url: invoiceUrl(draft.number), key: draft.key });
      assert.equal(got.json().hosted_url, null);

      expectStatus(await t.call({ method: "POST", url: invoiceUrl(draft.number, "/finalize"), key: draft.key }), 200);
      assert.deepEqual(await messagesOf(t, draft.key, draft.number), []);
      const resent = await send(draft.key, draft.number);
      expectStatus(resent, 202);
      assert.equal(resent.json().kind, "manual");
      assert.equal(resent.json().status, "queued");
      await t.app.mailWorker.drain();
      assert.equal(mailsTo(draft.email!).length, 1);
      assert.equal((await messagesOf(t, draft.key, draft.number))[0]!.status, "sent");

      expectStatus(await t.call({ method: "POST", url: invoiceUrl(draft.number, "/void"), key: draft.key }), 200);
      expectError(await send(draft.key, draft.number), 409, "invoice_is_void");
    });

    it("a customer without an email address: a resend fails at once and says why", async () => {
      const t = test();
      const { key, number } = await issuedFor(t, "none", null);
      const res = await t.call({ method: "POST", url: invoiceUrl(number, "/send"), key });
      expectStatus(res, 202);
      assert.equal(res.json().status, "failed");
      const [message] = await messagesOf(t, key, number);
      assert.equal(message!.status, "failed");
      assert.equal(message!.to, null);
      assert.match(message!.last_error ?? "", /no email address/);
    });

    it("a server that refuses: the invoice stays issued, the message is retried on the schedule, then failed with the reason", async () => {
      const t = test();
      smtp.mode = "refuse";
      const { key, number, email } = await issuedFor(t);
      await t.app.mailWorker.drain();
      let [message] = await messagesOf(t, key, number);
      assert.equal(message!.status, "queued", "retried later");
      assert.equal(message!.attempts, 1);
      assert.match(message!.last_error ?? "", /550/);
      assert.match(message!.last_error ?? "", /refuses/);
      const invoice = await t.call({ method: "GET", url: invoiceUrl(number), key });
      assert.equal(invoice.json().status, "issued");

      // The schedule is 1m, 5m: three attempts in all.
      await t.app.mailWorker.drain();
      assert.equal((await messagesOf(t, key, number))[0]!.attempts, 1, "not before its time");
      t.clock.advance(60_000);
      await t.app.mailWorker.drain();
      assert.equal((await messagesOf(t, key, number))[0]!.attempts, 2);
      t.clock.advance(5 * 60_000);
      await t.app.mailWorker.drain();
      [message] = await messagesOf(t, key, number);
      assert.equal(message!.status, "failed");
      assert.equal(message!.attempts, 3);
      assert.match(message!.last_error ?? "", /550/);
      t.clock.advance(60 * 60_000);
      await t.app.mailWorker.drain();
      assert.equal((await messagesOf(t, key, number))[0]!.attempts, 3, "failed for good");
      assert.equal(mailsTo(email!).length, 0);

      // The server is back: sending again by hand goes through.
      smtp.mode = "accept";
      expectStatus(await t.call({ method: "POST", url: invoiceUrl(number, "/send"), key }), 202);
      await t.app.mailWorker.drain();
      const log = await messagesOf(t, key, number);
      assert.deepEqual(
        log.map((m) => [m.kind, m.status]),
        [
          ["manual", "sent"],
          ["issued", "failed"],
        ],
      );
      assert.equal(mailsTo(email!).length, 1);
    });

    it("a server that never answers costs one attempt bounded by the timeout", async () => {
      const t = test();
      smtp.mode = "hang";
      const { key, number } = await issuedFor(t);
      const started = Date.now();
      await t.app.mailWorker.runOnce();
      const took = Date.now() - started;
      assert.ok(took < 8000, `the attempt ended after ${took} ms`);
      const [message] = await messagesOf(t, key, number);
      assert.equal(message!.status, "queued");
      assert.equal(message!.attempts, 1);
      assert.match(message!.last_error ?? "", /time/i);
      smtp.mode = "accept";
    });

    it("reminders 3 days before and 1 and 7 days after the due date, only while the invoice is unpaid", async () => {
      const t = test();
      smtp.mode = "accept";
      const unpaid = await issuedFor(t);
      const paid = await issuedFor(t);
      const voided = await issuedFor(t);
      await t.app.mailWorker.drain();
      t.clock.set(at("2026-04-07"));
      expectStatus(await t.call({ method: "POST", url: invoiceUrl(paid.number, "/pay"), key: paid.key }), 200);
      expectStatus(await t.call({ method: "POST", url: invoiceUrl(voided.number, "/void"), key: voided.key }), 200);

      const reminders = async (c: { key: string; number: string }) =>
        (await messagesOf(t, c.key, c.number))
          .filter((m) => m.kind === "reminder")
          .map((m) => [m.reminder_day, m.status]);
      const day = async (date: string) => {
        t.clock.set(at(date));
        await t.app.mailWorker.drain();
      };
      await day("2026-05-02");
      assert.deepEqual(await reminders(unpaid), [], "4 days before: none yet");
      await day("2026-05-03");
      assert.deepEqual(await reminders(unpaid), [[-3, "sent"]]);
      await day("2026-05-03");
      await day("2026-05-06");
      assert.deepEqual(await reminders(unpaid), [[-3, "sent"]], "one per day of the schedule");
      await day("2026-05-07");
      await day("2026-05-13");
      await day("2026-06-30");
      assert.deepEqual(await reminders(unpaid), [
        [7, "sent"],
        [1, "sent"],
        [-3, "sent"],
      ]);
      const mails = mailsTo(unpaid.email!);
      assert.equal(mails.length, 4);
      assert.deepEqual(
        mails.map((m) => m.subject),
        [
          `Invoice ${unpaid.number} from ${SELLER}`,
          ...Array(3).fill(`Reminder: invoice ${unpaid.number} from ${SELLER}`),
        ],
      );
      assert.match(mails[1]!.text ?? "", /due in 3 days/);
      assert.match(mails[3]!.text ?? "", /7 days ago/);
      for (const other of [paid, voided]) {
        assert.deepEqual(await reminders(other), [], "nothing after payment or void");
        assert.equal(mailsTo(other.email!).length, 1, "the issue email only");
      }
    });

    it("a worker that was off sends the latest reminder due, not every one it missed; reminder days are the account's", async () => {
      const t = test();
      smtp.mode = "accept";
      const late = await issuedFor(t);
      await t.app.mailWorker.drain();
      const patched = await t.call({
        method: "PATCH",
        url: "/v1/billing/account",
        key: late.key,
        payload: { reminder_days: [14, -3, 1] },
      });
      expectStatus(patched, 200);
      assert.deepEqual(patched.json().reminder_days, [-3, 1, 14]);
      expectError(
        await t.call({
          method: "PATCH",
          url: "/v1/billing/account",
          key: late.key,
          payload: { reminder_days: [1, 1] },
        }),
        400,
      );
      t.clock.set(at("2026-05-10"));
      await t.app.mailWorker.drain();
      const days = (await messagesOf(t, late.key, late.number))
        .filter((m) => m.kind === "reminder")
        .map((m) => m.reminder_day);
      assert.deepEqual(days, [1]);
      t.clock.set(at("2026-05-20"));
      await t.app.mailWorker.drain();
      const after = (await messagesOf(t, late.key, late.number))
        .filter((m) => m.kind === "reminder")
        .map((m) => m.reminder_day);
      assert.deepEqual(after, [14, 1]);
    });

    it("the hosted page: its token shows the invoice and its documents, any other token is 404, a revoked one too", async () => {
      const t = test();
      const { key, number, invoice } = await issuedFor(t, "none");
      const page = await t.call({ method: "GET", url: pathOf(invoice.hosted_url) });
      expectStatus(page, 200);
      assert.match(String(page.headers["content-type"]), /^text\/html/);
      assert.equal(page.headers["cache-control"], "no-store");
      assert.match(String(page.headers["x-robots-tag"]), /noindex/);
      assert.match(String(page.headers["content-security-policy"]), /default-src 'none'/);
      assert.equal(page.headers["referrer-policy"], "no-referrer");
      assert.equal(page.headers["x-frame-options"], "DENY");
      assert.ok(page.body.includes(number), "the number");
      assert.ok(page.body.includes(SELLER), "the seller");
      assert.ok(page.body.includes("Globex Corporation"), "the customer");
      assert.ok(page.body.includes(DUE), "the due date");
      const amountDue = formatMoney(Number(invoice.total).toFixed(2), "USD");
      assert.match(page.body, new RegExp(`<dd class="due">${amountDue.replace(/[$.]/g, "\\$&")}</dd>`), amountDue);
      assert.ok(page.body.includes('name="robots" content="noindex'));

      const pdf = await t.call({ method: "GET", url: `${pathOf(invoice.hosted_url)}/pdf` });
      expectStatus(pdf, 200);
      assert.equal(pdf.headers["content-type"], "application/pdf");
      const apiPdf = await t.call({ method: "GET", url: invoiceUrl(number, "/pdf"), key });
      assert.ok(pdf.rawPayload.equals(apiPdf.rawPayload), "the same PDF as the API's");
      const csv = await t.call({ method: "GET", url: `${pathOf(invoice.hosted_url)}/usage.csv` });
      expectStatus(csv, 200);
      const apiCsv = await t.call({ method: "GET", url: invoiceUrl(number, "/usage.csv"), key });
      assert.equal(csv.body, apiCsv.body);
      assert.equal(csv.headers["content-digest"], apiCsv.headers["content-digest"]);
      const events = csv.body.split("\n").filter((row) => row.startsWith("event,"));
      assert.equal(events.length, 1, "the one event, then the invoice's lines and total");

      const wrong = randomBytes(32).toString("base64url");
      for (const url of [
        `/i/${wrong}`,
        `/i/${wrong}/pdf`,
        `/i/${wrong}/usage.csv`,
        "/i/short",
        `/i/${"A".repeat(43)}`,
      ]) {
        const res = await t.call({ method: "GET", url });
        assert.equal(res.statusCode, 404, url);
        assert.ok(!res.body.includes(number));
      }

      const revoked = await t.call({ method: "POST", url: invoiceUrl(number, "/hosted-link/revoke"), key });
      expectStatus(revoked, 200);
      const fresh = revoked.json().hosted_url as string;
      assert.notEqual(fresh, invoice.hosted_url);
      assert.equal((await t.call({ method: "GET", url: pathOf(invoice.hosted_url) })).statusCode, 404);
      assert.equal((await t.call({ method: "GET", url: `${pathOf(invoice.hosted_url)}/pdf` })).statusCode, 404);
      expectStatus(await t.call({ method: "GET", url: pathOf(fresh) }), 200);
      const got = await t.call({ method: "GET", url: invoiceUrl(number), key });
      assert.equal(got.json().hosted_url, fresh);
    });

    it("a draft the invoice worker issues is emailed too: the worker issues through the same path", async () => {
      const t = test();
      smtp.mode = "accept";
      const { key, number, email } = await draftFor(t, "email");
      // March ended; the default grace (3 days) is over on April 4.
      t.clock.set(at("2026-04-05"));
      await t.app.invoiceWorker!.runOnce();
      const invoice = (await t.call({ method: "GET", url: invoiceUrl(number), key })).json();
      assert.equal(invoice.status, "issued");
      assert.match(invoice.hosted_url, /\/i\//);
      assert.deepEqual(
        (await messagesOf(t, key, number)).map((m) => [m.kind, m.status]),
        [["issued", "queued"]],
      );
      await t.app.mailWorker.drain();
      assert.equal(mailsTo(email!).length, 1);
      assert.ok(mailsTo(email!)[0]!.text?.includes(invoice.hosted_url));
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

describeEachEngine("invoice delivery without an SMTP server", (test) => {
  it("the message is not sent and says why", async () => {
    const t = test();
    const { key, number } = await issuedFor(t);
    await t.app.mailWorker.drain();
    const [message] = await messagesOf(t, key, number);
    assert.equal(message!.status, "failed");
    assert.match(message!.last_error ?? "", /BILLING_SMTP_URL is not set/);
  });
});
