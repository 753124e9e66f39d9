// "Upload a contract": the signed agreement as a PDF, then its terms reviewed in a form and saved. Step one
// keeps the checked PDF (a day at most) with what reading it proposed (services.contracts.extract's answer);
// step two shows each proposed value beside the text it came from, turns the form into the API's `terms`
// (uploadTermsInput) and saves it with the PDF through the same service call as
// POST /v1/billing/contracts/upload's. Step one is here; step two is contract-upload-review-pages.ts, its
// form's data contract-upload-form.ts.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { DomainError, ForbiddenError, RateLimitedError } from "../../../domain/kernel/errors.js";
import { readMultipartForm, UPLOAD_LIMITS } from "../../http/multipart-form.js";
import { html, type SafeHtml } from "../html.js";
import { csrfField, fieldError, invalidAttributes, page } from "../layout.js";
import {
  type DashboardDeps,
  formFailure,
  seeOther,
  sendFormExpired,
  sendPage,
  type Viewer,
  viewerOf,
} from "../page-kit.js";
import { contractUploadReviewPages } from "./contract-upload-review-pages.js";

function uploadStep(viewer: Viewer, error?: string): SafeHtml {
  return html`<section class="card" aria-labelledby="upload-heading">
<h2 id="upload-heading">1. The signed agreement</h2>
<p class="hint">A PDF of at most 10 MB (10,485,760 bytes), not password-protected. The next step proposes the terms read from it, each beside the text it came from (scanned pages are read by OCR), for you to check; what was not found you type.</p>
<form class="stack" method="post" action="/upload-contract" enctype="multipart/form-data">
  ${csrfField(viewer.ctx)}
  <div><label for="upload-file">Agreement (PDF)</label><input id="upload-file" name="file" type="file" accept="application/pdf,.pdf" required${invalidAttributes("upload-file", error)}>${fieldError("upload-file", error)}</div>
  <div><button type="submit">Read the agreement</button></div>
</form>
</section>`;
}

class FormExpired extends DomainError {
  readonly kind = "forbidden" as const;
  constructor() {
    super("The form's token does not match this session", "csrf_token_mismatch");
  }
}

export async function contractUploadPages(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get("/upload-contract", async (request, reply) => {
    const viewer = viewerOf(request);
    return sendPage(
      reply,
      page(viewer.ctx, "Upload a contract", html`<p><a href="/contracts">← All contracts</a></p>${uploadStep(viewer)}`),
    );
  });

  app.post(
    "/upload-contract",
    { config: { multipartForm: true } },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const viewer = viewerOf(request);
      const token = request.dashboard!.token;
      const csrf = (fields: URLSearchParams) => {
        if (!deps.services.access.csrfTokenMatches(token, fields.get("_csrf") ?? undefined)) throw new FormExpired();
      };
      try {
        const form = await readMultipartForm(request, {
          ...UPLOAD_LIMITS,
          maxFieldBytes: 4096,
          maxFields: 5,
          beforeFile: csrf,
        });
        csrf(form.fields);
        const staged = await deps.services.contracts.stageUpload(
          viewer.session.actor,
          form.file ?? { filename: undefined, bytes: Buffer.alloc(0) },
        );
        return seeOther(reply, `/upload-contract/${staged.id}`);
      } catch (error) {
        if (error instanceof FormExpired) return sendFormExpired(reply);
        if (error instanceof ForbiddenError) throw error;
        const { status, fields, flash } = formFailure(error, () => "file");
        const message = fields.file ?? flash.message;
        // Too many uploads being checked: the sentence says when to try again, the header says it to a machine.
        if (error instanceof RateLimitedError) void reply.header("retry-after", String(error.retryAfterSeconds));
        return sendPage(
          reply,
          page(
            viewer.ctx,
            "Upload a contract",
            html`<p><a href="/contracts">← All contracts</a></p>${uploadStep(viewer, message)}`,
            { flash: { kind: "error", message: "The agreement could not be taken: see the message beside the file." } },
          ),
          status,
        );
      }
    },
  );

  await contractUploadReviewPages(app, deps);
}

/** The contracts page's card: where an upload starts. */
export function uploadCard(): SafeHtml {
  return html`<section class="card" aria-labelledby="upload-contract"><h2 id="upload-contract">Upload a contract</h2>
<p class="hint">The signed agreement as a PDF, and its terms: read from the PDF in any layout, each beside the text it came from, for you to check before saving.</p>
<p><a class="button" href="/upload-contract">Upload a contract</a></p></section>`;
}
