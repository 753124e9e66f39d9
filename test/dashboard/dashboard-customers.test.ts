import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine } from "../support/harness.js";
import { alertOf, fieldErrorOf, signUp } from "../support/dashboard-client.js";

describeEachEngine("dashboard customers", (t) => {
  it("creates a customer from the form and shows it on its own page, escaped", async () => {
    const { client } = await signUp(t);
    const created = await client.post("/customers", {
      name: "Globex <Corp>",
      external_id: "globex-1",
      email: "billing@globex.example",
      payment_terms_days: "30",
    });
    assert.equal(created.statusCode, 303);
    assert.match(String(created.headers.location), /^\/customers\/[0-9a-f-]{36}\?done=created$/);
    const detail = await client.get(String(created.headers.location));
    assert.equal(detail.statusCode, 200);
    assert.match(detail.body, /<h1>Globex &lt;Corp&gt;<\/h1>/);
    assert.match(detail.body, /Net 30/);
    assert.match(detail.body, /Customer created\./);
    assert.match(detail.body, /No contracts for this customer yet/);
  });

  it("refuses a customer without a name or with a bad email, keeping what was typed and storing nothing", async () => {
    const { client } = await signUp(t);
    const noName = await client.post("/customers", { external_id: "nameless" });
    assert.equal(noName.statusCode, 400);
    assert.equal(fieldErrorOf(noName.body, "customer-name"), "This field is required.");
    assert.match(noName.body, /value="nameless"/);
    const badEmail = await client.post("/customers", { name: "Bad Email", email: "not-an-email" });
    assert.equal(badEmail.statusCode, 400);
    assert.equal(fieldErrorOf(badEmail.body, "customer-email"), "Enter an email address such as billing@example.com.");
    assert.equal(fieldErrorOf(badEmail.body, "customer-name"), undefined, "only the refused field carries an error");
    const badTerms = await client.post("/customers", { name: "Bad Terms", payment_terms_days: "thirty" });
    assert.equal(badTerms.statusCode, 400);
    assert.equal(fieldErrorOf(badTerms.body, "customer-payment_terms_days"), "Enter a whole number.");
    const list = await client.get("/customers");
    assert.match(list.body, /No customers yet/);
  });

  it("answers a second customer with the same external id with 409, naming the conflict", async () => {
    const { client } = await signUp(t);
    assert.equal((await client.post("/customers", { name: "First", external_id: "dup-1" })).statusCode, 303);
    const second = await client.post("/customers", { name: "Second", external_id: "dup-1" });
    assert.equal(second.statusCode, 409);
    assert.ok(alertOf(second.body));
    assert.equal(
      fieldErrorOf(second.body, "customer-external_id"),
      "First already has this external id; external ids are unique.",
    );
  });

  it("searches by external id, saying so when nothing matches", async () => {
    const { client } = await signUp(t);
    await client.post("/customers", { name: "Findable", external_id: "find-me" });
    await client.post("/customers", { name: "Other", external_id: "other-one" });
    const found = await client.get("/customers?external_id=find-me");
    assert.match(found.body, /Findable/);
    assert.doesNotMatch(found.body, />Other</);
    const none = await client.get("/customers?external_id=nobody");
    assert.match(none.body, /No customer has the external id “nobody”/);
  });

  it("copes with repeated query parameters and repeated form fields instead of failing", async () => {
    const { client } = await signUp(t);
    assert.equal((await client.get("/customers?external_id=a&external_id=b")).statusCode, 200);
    assert.equal((await client.get("/contracts?status=active&status=draft")).statusCode, 200);
    const login = await t().call({ method: "GET", url: "/login?next=/a&next=/b" });
    assert.equal(login.statusCode, 200);
    const nul = await client.post("/customers", { name: ["Nul\u0000Name", "Plain"] });
    assert.equal(nul.statusCode, 400);
    assert.match((await client.get("/customers")).body, /No customers yet/);
  });

  it("shows no message for a done key that is not one of the page's own (?done=constructor)", async () => {
    const { client } = await signUp(t);
    for (const done of ["constructor", "__proto__", "toString"]) {
      const response = await client.get(`/settings/api-keys?done=${done}`);
      assert.equal(response.statusCode, 200);
      assert.doesNotMatch(response.body, /class="alert /);
    }
  });
});

describeEachEngine(
  "dashboard request limits",
  (t) => {
    it("limits the requests of one signed-in session like an API key's, with 429 and Retry-After", async () => {
      const { client } = await signUp(t);
      const statuses: number[] = [];
      for (let i = 0; i < 8; i++) statuses.push((await client.get("/customers")).statusCode);
      assert.ok(statuses.includes(429), `statuses: ${statuses.join(",")}`);
      const limited = await client.get("/customers");
      assert.equal(limited.statusCode, 429);
      assert.ok(Number(limited.headers["retry-after"]) >= 1);
    });
  },
  { env: { BILLING_RATE_LIMIT: "5/m" } },
);
