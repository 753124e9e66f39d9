/**
 * Dates through the API at the edges of the range docs/api.md and the OpenAPI document give (years 0001 to 9999;
 * docs/decisions.md, "Dates and times"), on both engines: taken, stored and answered as sent, or refused 400.
 * Billing months and instants keep their narrower range, which the document states beside each such field.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { CONTRACTS, PROJECT, USAGE, companyWithContract } from "../support/api.js";
import { expectError, expectStatus } from "../support/assertions.js";
import { describeEachEngine } from "../support/harness.js";

describeEachEngine("dates at the edges of the range", (t) => {
  for (const day of ["0001-01-01", "1969-12-31", "1970-01-01", "9999-12-31"]) {
    it(`takes ${day} as a usage list's filter`, async () => {
      const { key, contract } = await companyWithContract(t());
      const res = await t().call({ method: "GET", url: `${USAGE}?contract=${contract.id}&from=${day}`, key });
      expectStatus(res, 200);
      assert.equal(res.json().object, "list");
    });

    it(`stores and answers ${day} as a credit grant's expiry`, async () => {
      const { key, contract } = await companyWithContract(t());
      const res = await t().call({
        method: "POST",
        url: `${CONTRACTS}/${contract.id}/credits`,
        key,
        payload: { type: "promotional", amount: "10.00", starts_on: "0001-01-01", expires_on: day },
      });
      expectStatus(res, 201);
      assert.equal(res.json().starts_on, "0001-01-01");
      assert.equal(res.json().expires_on, day);
      const read = await t().call({ method: "GET", url: `${CONTRACTS}/${contract.id}/credits/${res.json().id}`, key });
      assert.equal(read.json().expires_on, day);
    });
  }

  for (const day of ["0000-01-01", "0000-12-31", "10000-01-01", "1969-02-29"]) {
    it(`refuses ${day} with 400 invalid_request naming the field`, async () => {
      const { key, contract } = await companyWithContract(t());
      const res = await t().call({ method: "GET", url: `${USAGE}?contract=${contract.id}&from=${day}`, key });
      const body = expectError(res, 400, "invalid_request");
      assert.match(JSON.stringify(body), /from/);
    });
  }

  it("refuses a billing month before 1970-01 as the document says (invalid_billing_period)", async () => {
    const { key, contract } = await companyWithContract(t());
    const res = await t().call({
      method: "POST",
      url: PROJECT,
      key,
      payload: {
        external_contract_id: contract.id,
        billing_period_start: "1969-12-01",
        billing_period_end: "1969-12-31",
      },
    });
    const body = expectError(res, 400, "invalid_billing_period");
    assert.match(body.error, /from 1970-01 to 9989-12/);
    const document = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
    const period = document.paths["/v1/billing/invoices/project"].post.requestBody.content["application/json"].schema;
    assert.match(period.properties.billing_period_start.description, /from 1970-01 to 9989-12/);
  });

  it("the document says a date field's range is years 0001 to 9999", async () => {
    const document = JSON.stringify((await t().call({ method: "GET", url: "/v1/openapi.json" })).json());
    assert.ok(!document.includes("A date from 1970-01-01"), "no date field is said to start in 1970");
    assert.ok(document.includes("A date from 0001-01-01 to 9999-12-31"));
  });
});
