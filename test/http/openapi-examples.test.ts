/**
 * Every request example of the served OpenAPI document, sent as it stands to a fresh company with a sample
 * contract, is answered 2xx (docs/decisions.md, "The API's own description (issue 36)"). The service here starts on
 * a day far from the one the examples were written on, at the end of a month, so an example that names a fixed
 * date or a metric the sample contract does not have fails.
 */
import assert from "node:assert/strict";
import { it } from "node:test";
import { USAGE, companyWithContract, getPricing, submitAccepted, usageEvent } from "../support/api.js";
import { describeEachEngine, type TestApp } from "../support/harness.js";

interface Media {
  example?: unknown;
  examples?: Record<string, { value: unknown }>;
  schema?: { example?: unknown; examples?: unknown[] };
}

/** Each request example of the document: the operation, and the body it gives. */
function requestExamples(document: {
  paths: Record<string, Record<string, { requestBody?: { content?: Record<string, Media> } }>>;
}) {
  const found: Array<{ method: string; path: string; name: string; body: unknown }> = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const media = operation.requestBody?.content?.["application/json"];
      if (!media) continue;
      const add = (name: string, body: unknown) => found.push({ method: method.toUpperCase(), path, name, body });
      if (media.example !== undefined) add("example", media.example);
      for (const [name, example] of Object.entries(media.examples ?? {})) add(name, example.value);
      if (media.schema?.example !== undefined) add("schema example", media.schema.example);
      (media.schema?.examples ?? []).forEach((body, i) => add(`schema example ${i + 1}`, body));
    }
  }
  return found;
}

/** The path with its parameters filled from a fresh company's sample contract. */
async function freshPath(t: TestApp, path: string) {
  const { key, contract } = await companyWithContract(t);
  const values: Record<string, () => Promise<string>> = {
    ext_id: async () => contract.id,
    rule_id: async () => (await getPricing(t, key, contract.id)).rules[0]!.id,
    event_id: async () => {
      const event = usageEvent(contract.id, { timestamp: t.clock.now().toISOString() });
      await submitAccepted(t, key, [event]);
      return String(event.event_id);
    },
    number: async () => {
      const res = await t.call({ method: "GET", url: `${USAGE}?contract=${contract.id}`, key });
      assert.equal(res.statusCode, 200);
      return String(res.json().data[0]?.invoice_number);
    },
  };
  let url = path;
  for (const [, name] of path.matchAll(/\{([^}]+)\}/g)) {
    const value = values[name!];
    assert.ok(value, `a value for {${name}} of ${path}`);
    url = url.replace(`{${name}}`, encodeURIComponent(await value()));
  }
  return { key, url };
}

describeEachEngine(
  "the OpenAPI document's request examples",
  (t) => {
    it("are answered 2xx by a fresh company's sample contract, each of them", async () => {
      const document = (await t().call({ method: "GET", url: "/v1/openapi.json" })).json();
      const examples = requestExamples(document);
      assert.ok(examples.length >= 9, `${examples.length} examples found`);
      const refused: string[] = [];
      for (const example of examples) {
        const { key, url } = await freshPath(t(), example.path);
        const res = await t().call({ method: example.method as "POST", url, key, payload: example.body as object });
        if (res.statusCode < 200 || res.statusCode > 299)
          refused.push(`${example.method} ${example.path} (${example.name}): ${res.statusCode} ${res.body}`);
      }
      assert.deepEqual(refused, []);
    });
  },
  { clockStart: new Date("2031-11-30T22:00:00Z") },
);
