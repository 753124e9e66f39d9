import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { createBillingClient, decimalText, isDecimal } from "./billing-client.js";

// The client over a fetch that answers what a service would write, and keeps what the client sent: what an
// integrator's code sees of an answer, and what reaches the wire, without a server.
function clientAnswering(body: string, chunked = false) {
  const sent: string[] = [];
  const client = createBillingClient({
    baseUrl: "https://billing.example.com",
    apiKey: "sk_test_client",
    fetch: async (input: RequestInfo | URL) => {
      sent.push(input instanceof Request ? await input.text() : "");
      const length: Record<string, string> = chunked ? {} : { "content-length": String(Buffer.byteLength(body)) };
      return new Response(body, { status: 200, headers: { "content-type": "application/json", ...length } });
    },
  });
  return { client, sent };
}

const INVOICE = `{"object":"invoice","number":"INV-000001","subtotal":890.00,"tax":0,"total":99999999999999.99,"amount_due":890.00,"line_items":[{"description":"Domestic wire","quantity":44.5,"unit_price":20.000000000001,"amount":890.00}],"total_count":3}`;

describe("the typed client's answers through a plain JSON.stringify", () => {
  it("writes every decimal as the digits the service sent, never a sentinel", async () => {
    const { client } = clientAnswering(INVOICE);
    const { data } = await client.GET("/v1/billing/invoices/{number}", { params: { path: { number: "INV-000001" } } });
    assert.ok(data && isDecimal(data.total));
    const written = JSON.stringify(data);
    assert.doesNotMatch(written, /\\u0000|\u0000/, "no stand-in of the exact writer leaks");
    const read = JSON.parse(written);
    // Decimals are their exact digits (as strings: JSON.stringify cannot write a bare token it holds no double for).
    assert.equal(read.subtotal, "890.00");
    assert.equal(read.total, "99999999999999.99");
    assert.equal(read.line_items[0].amount, "890.00");
    assert.equal(read.line_items[0].unit_price, "20.000000000001");
    assert.equal(read.line_items[0].quantity, "44.5");
    // Every other number stays a number.
    assert.equal(read.total_count, 3);
    assert.equal(read.object, "invoice");
  });

  it("reads a chunked answer (no Content-Length, as a proxy may send it) as exactly", async () => {
    const { client } = clientAnswering(INVOICE, true);
    const { data } = await client.GET("/v1/billing/invoices/{number}", { params: { path: { number: "INV-000001" } } });
    assert.ok(data && isDecimal(data.total));
    assert.equal(decimalText(data.total), "99999999999999.99");
    assert.equal(JSON.parse(JSON.stringify(data)).subtotal, "890.00");
  });

  it("writes the same through a cache's round trip and res.json's pretty print", async () => {
    const { client } = clientAnswering(INVOICE);
    const { data } = await client.GET("/v1/billing/invoices/{number}", { params: { path: { number: "INV-000001" } } });
    assert.equal(JSON.parse(JSON.stringify(data, null, 2)).amount_due, decimalText(data!.amount_due));
  });

  it("still sends an answer's decimal in a request body as the bare number it was read as", async () => {
    const { client, sent } = clientAnswering(INVOICE);
    const { data } = await client.GET("/v1/billing/invoices/{number}", { params: { path: { number: "INV-000001" } } });
    await client.POST("/v1/billing/invoices/{number}/payments", {
      params: { path: { number: "INV-000001" } },
      body: { amount: data!.total, method: "wire" },
    });
    assert.equal(sent.at(-1), '{"amount":99999999999999.99,"method":"wire"}');
  });
});
