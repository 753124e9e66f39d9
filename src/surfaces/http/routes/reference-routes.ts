import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type { FastifyInstance } from "fastify";
import { resourceOrigins } from "../../mcp/mcp-origins.js";

// `GET /docs`: the API reference, rendered in the browser by Swagger UI (swagger-ui-dist) from the same
// /v1/openapi.json the API serves. Every asset is served from here: the page makes no request to any other
// host (its Content-Security-Policy says so too), and "Try it out" calls this service only.
// The page reads the document from /docs/openapi.json: the same document, but on a loopback public URL its
// server is the origin the page was opened under (`http://127.0.0.1:8080` when BILLING_PUBLIC_URL says
// `http://localhost:8080`, or `[::1]`). "Try it out" then calls the page's own origin, the only one its
// Content-Security-Policy lets it reach; with the document's server it was a blocked cross-origin call.

const SWAGGER_UI = dirname(createRequire(import.meta.url).resolve("swagger-ui-dist/package.json"));

/** The files of the page, and where each comes from; read on first use and kept (about 1.5 MB). */
const ASSETS: Record<string, { type: string; load: () => Promise<string | Buffer> }> = {
  "favicon-32x32.png": { type: "image/png", load: () => readFile(join(SWAGGER_UI, "favicon-32x32.png")) },
  "swagger-ui.css": {
    type: "text/css; charset=utf-8",
    load: () => readFile(join(SWAGGER_UI, "swagger-ui.css"), "utf8"),
  },
  "swagger-ui-bundle.js": {
    type: "text/javascript; charset=utf-8",
    load: () => readFile(join(SWAGGER_UI, "swagger-ui-bundle.js"), "utf8"),
  },
  "reference.js": { type: "text/javascript; charset=utf-8", load: async () => REFERENCE_JS },
  "reference.css": { type: "text/css; charset=utf-8", load: async () => REFERENCE_CSS },
};

// Swagger UI sets style attributes from script (its React components): styles may be inline, scripts may not.
const CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "form-action 'none'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join("; ");

const PAGE = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · Billing</title>
<link rel="icon" type="image/png" href="/docs/favicon-32x32.png">
<link rel="stylesheet" href="/docs/swagger-ui.css">
<link rel="stylesheet" href="/docs/reference.css">
</head>
<body>
<main id="reference" aria-label="API reference"></main>
<script src="/docs/swagger-ui-bundle.js"></script>
<script src="/docs/reference.js"></script>
</body>
</html>
`;

// The filter box searches every operation (its path, method, summary, description, operationId and tag),
// not only tag names as Swagger UI's own filter does.
const REFERENCE_JS = `"use strict";
(function () {
  function text(value) { return value == null ? "" : String(value).toLowerCase(); }
  function searchEverything() {
    return {
      fn: {
        opsFilter: function (taggedOps, phrase) {
          var needle = text(phrase).trim();
          if (!needle) return taggedOps;
          return taggedOps
            .map(function (tagObj, tag) {
              return tagObj.set("operations", tagObj.get("operations").filter(function (op) {
                var operation = op.get("operation");
                return [tag, op.get("path"), op.get("method"), operation.get("summary"), operation.get("description"), operation.get("operationId")]
                  .some(function (value) { return text(value).indexOf(needle) !== -1; });
              }));
            })
            .filter(function (tagObj) { return tagObj.get("operations").size > 0; });
        },
      },
    };
  }
  window.ui = SwaggerUIBundle({
    url: "/docs/openapi.json",
    dom_id: "#reference",
    deepLinking: true,
    filter: true,
    displayOperationId: true,
    displayRequestDuration: true,
    validatorUrl: null,
    tryItOutEnabled: false,
    persistAuthorization: false,
    plugins: [searchEverything],
  });
})();
`;

const REFERENCE_CSS = `body { margin: 0; }
.swagger-ui .topbar { display: none; }
.swagger-ui .filter-container .operation-filter-input { width: 100%; }
`;

export function referenceRoutes(publicUrl: string) {
  const origins = resourceOrigins(publicUrl);
  return async (app: FastifyInstance) => {
    const hide = { schema: { hide: true } };
    const loaded = new Map<string, Promise<string | Buffer>>();
    app.get("/docs/openapi.json", hide, async (request) => {
      const document = app.swagger() as { servers?: { url: string; description?: string }[] };
      // Not a loopback alias of the public URL: the public URL, as /v1/openapi.json says.
      const origin = origins.of(request.headers.host);
      const url = origin.href.replace(/\/$/, "");
      return { ...document, servers: [{ url, description: "This service, as this page reached it" }] };
    });
    app.get("/docs", hide, async (_request, reply) =>
      reply
        .type("text/html; charset=utf-8")
        .header("content-security-policy", CSP)
        .header("cache-control", "no-cache")
        .send(PAGE),
    );
    app.get<{ Params: { file: string } }>("/docs/:file", hide, async (request, reply) => {
      const asset = Object.hasOwn(ASSETS, request.params.file) ? ASSETS[request.params.file] : undefined;
      if (!asset) return reply.code(404).send({ error: "Not found", code: "not_found" });
      let body = loaded.get(request.params.file);
      if (!body) {
        body = asset.load();
        loaded.set(request.params.file, body);
        body.catch(() => loaded.delete(request.params.file)); // tried again by the next request
      }
      return reply
        .type(asset.type)
        .header("cache-control", "public, max-age=3600")
        .send(await body);
    });
  };
}
