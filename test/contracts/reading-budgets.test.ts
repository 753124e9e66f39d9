/**
 * The readers' budgets are the composition's (config.ts → compose.ts → the contract uploads), not constants
 * inside the readers: a deployment, or a test on a loaded machine, can give them more, and a budget given is the
 * one a reading is held to.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine, type TestApp } from "../support/harness.js";
import { multipart, plainPdf, uploadTerms } from "../support/uploads.js";

const upload = async (t: TestApp) => {
  const { key } = await t.newCompany();
  const body = await multipart([
    { name: "file", value: await plainPdf() },
    { name: "terms", value: JSON.stringify(uploadTerms()) },
  ]);
  return t.call({ method: "POST", url: "/v1/billing/contracts/upload", key, ...body });
};

describeEachEngine(
  "a reading budget given by the composition",
  (t) => {
    it("is the one an upload's reading is held to: 1 ms of CPU refuses an ordinary PDF as too complex", async () => {
      const res = await upload(t());
      assert.equal(res.statusCode, 400, res.body);
      assert.equal(res.json().code, "file_too_complex");
    });
  },
  {
    configure: (config) => ({
      ...config,
      readings: { ...config.readings, pdf: { ...config.readings.pdf, cpuMs: 1 } },
    }),
  },
);

describeEachEngine("the default reading budgets", (t) => {
  it("read the same ordinary PDF and store its contract", async () => {
    const res = await upload(t());
    assert.equal(res.statusCode, 201, res.body);
  });
});
