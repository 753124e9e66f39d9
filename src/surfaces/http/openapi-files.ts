// What the route schemas cannot say about the operations that carry files (the zod schemas describe JSON):
// the contract upload's multipart body, and the binary answers of the PDF and CSV downloads. Applied to the
// generated OpenAPI document once, here.
import { z } from "zod";
import { uploadTermsInput } from "../../domain/contracts/contract-schemas.js";

type Operation = { requestBody?: unknown; responses?: Record<string, unknown> };
type Document = { paths?: Record<string, Record<string, Operation> | undefined> };

const LOGO_TYPES = ["image/png", "image/jpeg"];

const binary = (mediaType: string, description: string, headers?: Record<string, unknown>) => ({
  description,
  ...(headers ? { headers } : {}),
  content: { [mediaType]: { schema: { type: "string", format: "binary" } } },
});

export function describeFileOperations<T extends object>(document: T): T {
  const paths = (document as Document).paths ?? {};
  const answer = (path: string, method: string, status: string, response: unknown) => {
    const operation = paths[path]?.[method];
    if (operation) operation.responses = { [status]: response, ...operation.responses };
  };
  answer("/v1/billing/invoices/{number}/pdf", "get", "200", binary("application/pdf", "The invoice as a PDF"));
  answer("/v1/billing/credit-notes/{number}/pdf", "get", "200", binary("application/pdf", "The credit note as a PDF"));
  answer(
    "/v1/billing/contracts/{ext_id}/agreement.pdf",
    "get",
    "200",
    binary("application/pdf", "The agreement: as uploaded, or generated"),
  );
  answer(
    "/v1/billing/invoices/{number}/usage.csv",
    "get",
    "200",
    binary("text/csv", "The usage statement, streamed", {
      "Content-Digest": {
        description: "`sha-256=:<base64>:`, the SHA-256 of the file's bytes (RFC 9530)",
        required: true,
        schema: { type: "string" },
      },
    }),
  );
  answer("/v1/billing/account/logo", "get", "200", {
    description: "The logo, as uploaded",
    content: Object.fromEntries(LOGO_TYPES.map((type) => [type, { schema: { type: "string", format: "binary" } }])),
  });
  const logo = paths["/v1/billing/account/logo"]?.put;
  if (logo) {
    logo.requestBody = {
      required: true,
      content: Object.fromEntries(
        LOGO_TYPES.map((type) => [type, { schema: { type: "string", format: "binary", maxLength: 1048576 } }]),
      ),
    };
  }
  const upload = paths["/v1/billing/contracts/upload"]?.post;
  if (upload) {
    upload.requestBody = {
      required: true,
      content: {
        "multipart/form-data": {
          schema: {
            type: "object",
            required: ["file", "terms"],
            properties: {
              file: {
                type: "string",
                format: "binary",
                contentMediaType: "application/pdf",
                description: "The signed agreement: a PDF of at most 10 MiB (10,485,760 bytes), not encrypted",
              },
              terms: {
                type: "string",
                contentMediaType: "application/json",
                contentSchema: z.toJSONSchema(uploadTermsInput, {
                  io: "input",
                  unrepresentable: "any",
                  target: "draft-2020-12",
                }),
                description: "The contract's terms as a JSON text",
              },
            },
          },
          encoding: { file: { contentType: "application/pdf" }, terms: { contentType: "application/json" } },
        },
      },
    };
  }
  const extract = paths["/v1/billing/contracts/extract"]?.post;
  if (extract) {
    extract.requestBody = {
      required: true,
      content: {
        "multipart/form-data": {
          schema: {
            type: "object",
            required: ["file"],
            properties: {
              file: {
                type: "string",
                format: "binary",
                contentMediaType: "application/pdf",
                description: "The agreement: a PDF of at most 10 MiB (10,485,760 bytes), not encrypted, in any layout",
              },
            },
          },
          encoding: { file: { contentType: "application/pdf" } },
        },
      },
    };
  }
  return document;
}
