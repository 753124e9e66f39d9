/**
 * The dashboard's invoice page, delivery (docs/api.md, "Delivery"): the hosted link and its revoke button, the
 * message log and "Send again", over fastify.inject. Email is off here (no BILLING_SMTP_URL): the log says why.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import {
  createCustomer,
  createSampleContract,
  getInvoice,
  invoicesOf,
  submitAccepted,
  usageEvent,
} from "../support/api.js";
import { dashboardCompany, tableRows } from "../support/dashboard-client.js";
import { describeEachEngine } from "../support/harness.js";

describeEachEngine("dashboard invoice delivery", (t) => {
  it("shows the hosted link and the messages, sends again and revokes the link", async () => {
    const { client, key } = await dashboardCompany(t);
    const customer = await createCustomer(t(), key, {
      name: "Delivery Page Co",
      email: "ap@delivery.test",
      invoice_delivery: "email",
    });
    const contract = await createSampleContract(t(), key, customer.id);
    await submitAccepted(t(), key, [usageEvent(contract.id, { timestamp: "2026-03-15T08:00:00.000Z" })]);
    const [march] = await invoicesOf(t(), key, contract.id);
    const number = march!.number;

    const draftPage = await client.get(`/invoices/${number}`);
    assert.doesNotMatch(draftPage.body, /Send again/, "a draft is not sent");

    assert.equal((await client.post(`/invoices/${number}/finalize`, { confirm: "yes" })).statusCode, 303);
    const issued = await getInvoice(t(), key, number);
    await t().app.mailWorker.drain();
    const page = await client.get(`/invoices/${number}`);
    assert.equal(page.statusCode, 200);
    assert.ok(page.body.includes(`<a class="mono" href="${issued.hosted_url}" rel="noreferrer">`), "the hosted link");
    const caption = `Messages about invoice ${number}, newest first`;
    const [issuedRow] = tableRows(page.body, caption);
    assert.match(issuedRow!, /<td>issued<\/td><td>ap@delivery\.test<\/td>/);
    assert.match(issuedRow!, /class="badge bad">failed</);
    assert.match(issuedRow!, /BILLING_SMTP_URL is not set/);

    const sent = await client.post(`/invoices/${number}/send`, {});
    assert.equal(sent.statusCode, 303);
    assert.equal(sent.headers.location, `/invoices/${number}?done=sent`);
    const after = await client.get(String(sent.headers.location));
    assert.match(after.body, /role="status">Email queued/);
    const rows = tableRows(after.body, caption);
    assert.equal(rows.length, 2);
    assert.match(rows[0]!, /<td>manual<\/td>/);
    assert.match(rows[0]!, /class="badge warn">queued</);

    const revoked = await client.post(`/invoices/${number}/hosted-link/revoke`, {});
    assert.equal(revoked.statusCode, 303);
    const fresh = (await getInvoice(t(), key, number)).hosted_url;
    assert.notEqual(fresh, issued.hosted_url);
    const revokedPage = await client.get(String(revoked.headers.location));
    assert.match(revokedPage.body, /Hosted link replaced/);
    assert.ok(revokedPage.body.includes(`<a class="mono" href="${fresh}"`));
    assert.equal((await client.post(`/invoices/${number}/send`, {}, { csrf: null })).statusCode, 403);
  });
});
