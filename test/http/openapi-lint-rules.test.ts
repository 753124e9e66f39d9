/**
 * The rules of Spectral's `spectral:oas` ruleset that our document could break, held in the fast tier
 * (`npm run lint:openapi:spectral` runs Spectral itself; docs/api.md, "The OpenAPI document"): every operation
 * has a description, a unique operationId and tags the document defines, at least one 2xx (or 2XX) answer, and
 * parameters for every `{name}` of its path; the document has a contact, a description and servers.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { describeEachEngine } from "../support/harness.js";

interface Operation {
  operationId?: string;
  description?: string;
  tags?: string[];
  responses?: Record<string, unknown>;
  parameters?: Array<{ in: string; name: string }>;
}

const METHODS = ["get", "put", "post", "delete", "patch", "head", "options", "trace"];

describeEachEngine("the OpenAPI document against spectral:oas", (t) => {
  it("breaks none of the rules", async () => {
    const document = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
    const problems: string[] = [];
    if (!document.info?.contact) problems.push("info-contact");
    if (!document.info?.description) problems.push("info-description");
    if (!document.servers?.length) problems.push("oas3-api-servers");
    const tags = new Set((document.tags ?? []).map((tag: { name: string }) => tag.name));
    const ids = new Map<string, string>();
    const operations: Array<[string, Operation]> = [];
    for (const [path, item] of Object.entries<Record<string, Operation>>(document.paths)) {
      for (const method of METHODS.filter((m) => item[m]))
        operations.push([`${method.toUpperCase()} ${path}`, item[method]!]);
    }
    for (const [name, item] of Object.entries<Record<string, Operation>>(document.webhooks ?? {})) {
      for (const method of METHODS.filter((m) => item[m])) operations.push([`webhook ${name}`, item[method]!]);
    }
    for (const [where, operation] of operations) {
      if (!operation.description?.trim()) problems.push(`operation-description: ${where}`);
      if (!operation.operationId) problems.push(`operation-operationId: ${where}`);
      else if (ids.has(operation.operationId)) problems.push(`operation-operationId-unique: ${where}`);
      else ids.set(operation.operationId, where);
      if (!operation.tags?.length) problems.push(`operation-tags: ${where}`);
      for (const tag of operation.tags ?? [])
        if (!tags.has(tag)) problems.push(`operation-tag-defined: ${where} ${tag}`);
      if (!Object.keys(operation.responses ?? {}).some((status) => /^2(\d\d|XX)$/.test(status)))
        problems.push(`operation-success-response: ${where}`);
      const path = where.split(" ")[1] ?? "";
      for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
        if (!operation.parameters?.some((p) => p.in === "path" && p.name === name))
          problems.push(`path-params: ${where} {${name}}`);
      }
    }
    assert.ok(operations.length > 50, `${operations.length} operations read`);
    assert.deepEqual(problems, []);
  });
});
