/**
 * Collecting and correcting from the invoice page, black-box over fastify.inject: a partial payment, an
 * overpayment refused beside its field, a credit note on a line (only with its box ticked), and a void
 * invoice linked to its reissue. What a form changed is read back through the API.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine } from "../support/harness.js";
import { getInvoice, invoicesOf, submitAccepted, usageEvent } from "../support/api.js";
import { assertAlert, dashboardCompany, fieldErrorOf, sampleContract, tableRows } from "../support/dashboard-client.js";

describeEachEngine("dashboard payments and credit notes", (t) => {
  it("records a partial payment, refuses an overpayment, issues a credit note, and links a reissue", async () => {
    const { client, key } = await dashboardCompany(t);
    const contract = await sampleContract(t, key, "Collections Page Co");
    await submitAccepted(t(), key, [usageEvent(contract.id, { quantity: 2 })]);
    const [march] = await invoicesOf(t(), key, contract.id);
    const path = `/invoices/${march!.number}`;
    assert.equal((await client.post(`${path}/finalize`, { confirm: "yes" })).statusCode, 303);
    const issued = await getInvoice(t(), key, march!.number);

    const page = await client.get(path);
    assert.match(page.body, /<h2 id="payments-heading">Money received<\/h2>/);
    assert.match(page.body, /No payment recorded yet/);

    const over = await client.post(`${path}/payments`, { amount: "999999", method: "wire" });
    assertAlert(over, 409, /more than the/);
    assert.match(fieldErrorOf(over.body, "payment-amount") ?? "", /more than the/);
    assert.match(over.body, /id="payment-amount" name="amount"[^>]*value="999999"/, "the amount typed is kept");
    const badAmount = await client.post(`${path}/payments`, { amount: "12,50", method: "wire" });
    assert.equal(badAmount.statusCode, 400);
    assert.match(fieldErrorOf(badAmount.body, "payment-amount") ?? "", /Enter a number such as 12\.50/);

    const paid = await client.post(`${path}/payments`, { amount: "100.00", method: "check", reference: "CHK 881" });
    assert.equal(paid.statusCode, 303);
    assert.equal(paid.headers.location, `${path}?done=payment_recorded`);
    const after = await getInvoice(t(), key, march!.number);
    assert.equal(after.status, "issued");
    assert.equal((after as { amount_paid?: unknown }).amount_paid, 100);
    const rows = tableRows((await client.get(path)).body, `Payments of invoice ${march!.number}`);
    assert.equal(rows.length, 1);
    assert.match(rows[0]!, /Check.*CHK 881.*\$100\.00/);

    const unticked = await client.post(`${path}/credit-notes`, { line: "0", amount: "5", reason: "Twice" });
    assert.equal(unticked.statusCode, 400);
    assert.equal(fieldErrorOf(unticked.body, "credit-confirm"), "Tick this box to confirm: this cannot be undone.");
    const note = await client.post(`${path}/credit-notes`, { line: "0", amount: "5", reason: "Twice", confirm: "yes" });
    assert.equal(note.statusCode, 303);
    const notes = tableRows((await client.get(path)).body, `Credit notes of invoice ${march!.number}`);
    assert.equal(notes.length, 1);
    assert.match(notes[0]!, /CN-000001.*Twice/);

    // Voiding is refused once money came in; a fresh issued invoice is voided and names its reissue.
    assertAlert(await client.post(`${path}/void`, { confirm: "yes" }), 409, /payments or credit notes/);
    const other = await sampleContract(t, key, "Reissue Page Co");
    await submitAccepted(t(), key, [usageEvent(other.id)]);
    const [april] = await invoicesOf(t(), key, other.id);
    assert.equal((await client.post(`/invoices/${april!.number}/finalize`, { confirm: "yes" })).statusCode, 303);
    assert.equal((await client.post(`/invoices/${april!.number}/void`, { confirm: "yes" })).statusCode, 303);
    const reissuedAs = (await getInvoice(t(), key, april!.number)) as { reissued_as?: string };
    assert.ok(reissuedAs.reissued_as);
    const voidPage = await client.get(`/invoices/${april!.number}`);
    assert.match(voidPage.body, new RegExp(`reissued as <a href="/invoices/${reissuedAs.reissued_as}">`));
    const reissuePage = await client.get(`/invoices/${reissuedAs.reissued_as}`);
    assert.match(reissuePage.body, new RegExp(`reissues <a href="/invoices/${april!.number}">`));
    assert.ok(issued.total);
  });
});
