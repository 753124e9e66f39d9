import type { FastifyPluginAsyncZod } from "fastify-type-provider-zod";
import { accountSchema, updateAccountInput } from "../../../domain/account/account-schemas.js";
import { UnsupportedContentError } from "../../../domain/kernel/errors.js";
import type { Services } from "../../../domain/services.js";
import { noBody } from "../action-body.js";
import { actorOf } from "../authenticate.js";
import { errorResponses, TOO_MANY_DOCUMENTS } from "../openapi-errors.js";

const LOGO_TYPES = ["image/png", "image/jpeg"];

/** The seller's profile, as every invoice shows it: GET/PATCH /v1/billing/account, and its logo. */
export function accountRoutes(services: Services): FastifyPluginAsyncZod {
  return async (app) => {
    app.get(
      "/v1/billing/account",
      {
        schema: {
          operationId: "getAccount",
          tags: ["Account"],
          summary: "Get the seller's profile that invoices print",
          description: "Scope `invoices:read` or `invoices:write`.",
          response: { 200: accountSchema, ...errorResponses({}) },
        },
      },
      async (request) => services.account.get(actorOf(request)),
    );

    app.patch(
      "/v1/billing/account",
      {
        schema: {
          operationId: "updateAccount",
          tags: ["Account"],
          summary: "Change the seller's profile",
          description:
            "Changes the fields sent; `null` clears one. Invoices issued before keep the profile they were issued with. Scope `invoices:write`.",
          body: updateAccountInput,
          response: { 200: accountSchema, ...errorResponses({}) },
        },
      },
      async (request) => services.account.update(actorOf(request), request.body),
    );

    // The logo is sent as the body itself, its type in Content-Type: only this scope reads image bodies.
    await app.register(async (scope) => {
      for (const type of LOGO_TYPES) {
        scope.addContentTypeParser(type, { parseAs: "buffer" }, (_request, body, done) => done(null, body));
      }
      scope.put(
        "/v1/billing/account/logo",
        {
          schema: {
            operationId: "putAccountLogo",
            tags: ["Account"],
            summary: "Set the logo printed on invoices",
            description:
              "The body is the image itself, sent as `image/png` or `image/jpeg` (at most 1 MiB and 4000 pixels a side: maxima; 8-bit, not interlaced, for a PNG). It is checked whole and, when larger than 600 × 224 pixels (what the invoice's logo box needs), scaled down once, its proportions kept, in the same format; that small image is what is stored, what `GET` answers and what every document prints. Scope `invoices:write`.",
            response: {
              200: accountSchema,
              ...errorResponses({
                400: {
                  invalid_logo: "the body is not a whole PNG or JPEG image the PDF can print; the sentence says why",
                },
                415: { unsupported_media_type: "the body is not sent as `image/png` or `image/jpeg`" },
                429: TOO_MANY_DOCUMENTS,
              }),
            },
          },
        },
        async (request) => {
          if (!Buffer.isBuffer(request.body)) {
            throw new UnsupportedContentError(
              "Send the logo as the body, with Content-Type image/png or image/jpeg",
              "unsupported_media_type",
            );
          }
          return services.account.putLogo(actorOf(request), request.body);
        },
      );
    });

    app.get(
      "/v1/billing/account/logo",
      {
        schema: {
          operationId: "getAccountLogo",
          tags: ["Account"],
          summary: "Download the logo",
          description:
            "The image as stored and printed: as uploaded when it fitted 600 × 224 pixels, else the smaller copy made of it when it was uploaded. Scope `invoices:read` or `invoices:write`.",
          response: errorResponses({ 404: { not_found: "the account has no logo" } }),
        },
      },
      async (request, reply) => {
        const logo = await services.account.logo(actorOf(request));
        return reply.header("content-type", logo.contentType).send(Buffer.from(logo.bytes));
      },
    );

    app.delete(
      "/v1/billing/account/logo",
      {
        schema: {
          operationId: "deleteAccountLogo",
          tags: ["Account"],
          summary: "Remove the logo",
          description: "Invoices issued before keep it. Scope `invoices:write`.",
          body: noBody(),
          response: { 200: accountSchema, ...errorResponses({}) },
        },
      },
      async (request) => services.account.deleteLogo(actorOf(request)),
    );
  };
}
