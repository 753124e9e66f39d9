/**
 * A method a path does not take answers 405 `method_not_allowed` with an `Allow` that lists exactly the methods
 * the OpenAPI document gives that path (and HEAD beside GET), for every path of the document (docs/api.md,
 * "Conventions"). A literal path beside a parameter's (`/contracts/extract` beside `/contracts/{ext_id}`) is its
 * own: it advertised the other's GET.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { expectError } from "../support/assertions.js";
import { describeEachEngine } from "../support/harness.js";

const METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE"];

describeEachEngine("Allow on a method a path does not take", (t) => {
  it("lists exactly the document's methods of every path", async () => {
    const { key } = await t().newCompany();
    const document = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
    const wrong: string[] = [];
    let checked = 0;
    for (const [path, item] of Object.entries<Record<string, unknown>>(document.paths)) {
      const listed = Object.keys(item)
        .map((method) => method.toUpperCase())
        .filter((method) => METHODS.includes(method));
      const expected = [...listed, ...(listed.includes("GET") ? ["HEAD"] : [])].sort();
      const url = path.replace(/\{[^}]+\}/g, "x1");
      for (const method of METHODS.filter((m) => !listed.includes(m))) {
        const res = await t().call({ method: method as "PUT", url, key });
        expectError(res, 405, "method_not_allowed");
        const allow = String(res.headers.allow ?? "")
          .split(",")
          .map((m) => m.trim())
          .sort();
        checked++;
        if (allow.join(", ") !== expected.join(", "))
          wrong.push(`${method} ${path}: Allow ${allow} (the document: ${expected})`);
      }
    }
    assert.ok(checked > 100, `checked ${checked} wrong methods`);
    assert.deepEqual(wrong, []);
  });

  it("answers the path's own methods at /v1/billing/contracts/extract, upload and invoices/project", async () => {
    const { key } = await t().newCompany();
    for (const path of [
      "/v1/billing/contracts/extract",
      "/v1/billing/contracts/upload",
      "/v1/billing/invoices/project",
    ]) {
      const res = await t().call({ method: "PUT", url: path, key });
      expectError(res, 405, "method_not_allowed");
      assert.equal(res.headers.allow, "POST", path);
    }
  });
});
