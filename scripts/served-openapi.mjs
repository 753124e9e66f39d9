// The OpenAPI document exactly as GET /v1/openapi.json serves it, from the app started in-process with the
// test configuration (run under tsx: it loads the TypeScript app). Shared by `npm run lint:openapi` and
// `npm run generate:client`, so both read the one document clients get.
import { createApp } from "../src/app.js";
import { testConfig } from "../test/support/harness.js";

/**
 * The served document's text. The public URL is one such as a deployment has: the document's `servers` is
 * that URL (and the tests' localhost is what Redocly's rule no-server-example.com refuses).
 */
export async function servedOpenApi() {
  const app = await createApp(testConfig({ BILLING_PUBLIC_URL: "https://billing.test" }));
  try {
    const res = await app.http.inject({ method: "GET", url: "/v1/openapi.json" });
    if (res.statusCode !== 200) throw new Error(`GET /v1/openapi.json answered ${res.statusCode}: ${res.body}`);
    return res.body;
  } finally {
    await app.close();
  }
}
