/**
 * docs/api.md covers what the service serves: every operation of the served OpenAPI document is a row of its
 * "Every operation" table (and every row is an operation), and every webhook event type the service can emit
 * (EVENT_TYPES, their one definition) is named, with its envelope, where the page describes the document's
 * `webhooks`, which hold exactly those types.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { it } from "node:test";
import { EVENT_TYPES } from "../../src/domain/webhooks/outbox.js";
import { describeEachEngine } from "../support/harness.js";

const API_MD = readFileSync(new URL("../../docs/api.md", import.meta.url), "utf8");

/** The text of one `##` section of docs/api.md (up to the next `##`). */
function section(title: string): string {
  const start = API_MD.indexOf(`\n## ${title}\n`);
  assert.ok(start >= 0, `docs/api.md has a section "${title}"`);
  const end = API_MD.indexOf("\n## ", start + 1);
  return API_MD.slice(start, end === -1 ? undefined : end);
}

describeEachEngine("docs/api.md against the served document", (t) => {
  it("lists every operation, and only those, with its operationId", async () => {
    const document = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
    const served = new Set<string>();
    for (const [path, item] of Object.entries<Record<string, { operationId?: string }>>(document.paths)) {
      for (const [method, operation] of Object.entries(item)) {
        if (operation.operationId) served.add(`${method.toUpperCase()} ${path} ${operation.operationId}`);
      }
    }
    const rows = new Set(
      [...section("Every operation").matchAll(/^\| `([A-Z]+) (\/[^`]+)` \| `([A-Za-z]+)` \|/gm)].map(
        (m) => `${m[1]} ${m[2]} ${m[3]}`,
      ),
    );
    assert.deepEqual(
      [...served].filter((op) => !rows.has(op)),
      [],
      "operations docs/api.md does not list",
    );
    assert.deepEqual(
      [...rows].filter((op) => !served.has(op)),
      [],
      "rows that are no operation of the document",
    );
  });

  it("names every webhook event type and its envelope where it describes the document's webhooks", async () => {
    const document = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
    assert.deepEqual(Object.keys(document.webhooks).sort(), [...EVENT_TYPES].sort(), "the document's webhooks");
    const text = section("The OpenAPI document");
    const missing: string[] = [];
    for (const type of EVENT_TYPES) {
      const ref: string = document.webhooks[type].post.requestBody.content["application/json"].schema.$ref;
      const envelope = ref.split("/").at(-1)!;
      if (!text.includes(`\`${type}\``)) missing.push(type);
      if (!text.includes(`\`${envelope}\``)) missing.push(envelope);
      if (!section("Webhook endpoints").includes(`\`${type}\``)) missing.push(`${type} (Webhook endpoints)`);
    }
    assert.deepEqual(missing, []);
  });
});
