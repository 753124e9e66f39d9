// Settings → "Invoice profile": the seller's profile every invoice prints (the same service calls as GET/PATCH
// /v1/billing/account) and its logo, uploaded as a multipart form (checked whole by the service, as the API's
// PUT /v1/billing/account/logo is), shown, and removed.
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import {
  type Account,
  MAX_LOGO_BYTES,
  PAPER_SIZES,
  updateAccountInput,
} from "../../../domain/account/account-schemas.js";
import { DomainError, ForbiddenError, ValidationError } from "../../../domain/kernel/errors.js";
import { readMultipartForm } from "../../http/multipart-form.js";
import { html, type SafeHtml } from "../html.js";
import {
  csrfField,
  doneFlash,
  fieldError,
  inputField,
  invalidAttributes,
  page,
  settingsNav,
  type Flash,
} from "../layout.js";
import {
  type DashboardDeps,
  field,
  type FieldErrors,
  formFailure,
  formOf,
  parseWith,
  seeOther,
  sendFormExpired,
  sendPage,
  type Viewer,
  viewerOf,
} from "../page-kit.js";

const PATH = "/settings/invoice-profile";

const DONE: Record<string, Flash> = {
  saved: { kind: "ok", message: "Invoice profile saved. Invoices issued from now on print it." },
  logo: { kind: "ok", message: "Logo saved." },
  "logo-removed": { kind: "ok", message: "Logo removed." },
};

/** The profile's text fields, as the form names them (the API's names). */
const TEXT_FIELDS = ["legal_name", "address", "tax_id", "payment_instructions", "invoice_footer"] as const;
type ProfileValues = Partial<Record<(typeof TEXT_FIELDS)[number] | "paper_size" | "payment_terms_days", string>>;

const LABELS: Record<string, string> = {
  legal_name: "the legal name",
  tax_id: "the tax id",
  payment_instructions: "the payment instructions",
  invoice_footer: "the footer",
  paper_size: "the paper size",
  payment_terms_days: "the payment terms",
};

function valuesOf(account: Account): ProfileValues {
  return {
    legal_name: account.legal_name ?? undefined,
    address: account.address ?? undefined,
    tax_id: account.tax_id ?? undefined,
    payment_instructions: account.payment_instructions ?? undefined,
    invoice_footer: account.invoice_footer ?? undefined,
    paper_size: account.paper_size,
    payment_terms_days: String(account.payment_terms_days),
  };
}

function textArea(name: keyof ProfileValues, label: string, hint: string, value: string | undefined, error?: string) {
  const id = `profile-${name}`;
  return html`<div><label for="${id}">${label} <span class="hint">${hint}</span></label><textarea id="${id}" name="${name}" rows="4"${invalidAttributes(id, error)}>${value ?? ""}</textarea>${fieldError(id, error)}</div>`;
}

function profileForm(viewer: Viewer, account: Account, values: ProfileValues, errors: FieldErrors): SafeHtml {
  const paper = values.paper_size ?? account.paper_size;
  return html`<section class="card" aria-labelledby="profile-heading">
<h2 id="profile-heading">What invoices print about you</h2>
<p class="hint">Invoices already issued keep what they were issued with. Leave a field blank to print nothing for it.</p>
<form class="stack" method="post" action="${PATH}">
  ${csrfField(viewer.ctx)}
  ${inputField({ id: "profile-legal_name", name: "legal_name", label: "Legal name", hint: `(blank: your company name, ${account.name})`, value: values.legal_name, maxlength: 200, error: errors.legal_name })}
  ${textArea("address", "Address", "(several lines)", values.address, errors.address)}
  ${inputField({ id: "profile-tax_id", name: "tax_id", label: "Tax id", hint: "(VAT, GST or EIN number)", value: values.tax_id, maxlength: 100, error: errors.tax_id })}
  ${textArea("payment_instructions", "Payment instructions", "(bank, account and routing numbers, IBAN and BIC)", values.payment_instructions, errors.payment_instructions)}
  ${textArea("invoice_footer", "Footer", "(printed at the foot of every invoice)", values.invoice_footer, errors.invoice_footer)}
  <div><label for="profile-paper_size">Paper size</label><select id="profile-paper_size" name="paper_size"${invalidAttributes("profile-paper_size", errors.paper_size)}>
    ${PAPER_SIZES.map((size) => html`<option value="${size}"${size === paper ? html` selected` : ""}>${size === "a4" ? "A4" : "US Letter"}</option>`)}
  </select>${fieldError("profile-paper_size", errors.paper_size)}</div>
  ${inputField({ id: "profile-payment_terms_days", name: "payment_terms_days", label: "Default payment terms, days", hint: "(for customers and contracts without their own; 30 is Net 30)", type: "number", inputmode: "numeric", required: true, value: values.payment_terms_days, error: errors.payment_terms_days })}
  <div><button type="submit">Save profile</button></div>
</form>
</section>`;
}

function logoSection(viewer: Viewer, account: Account, error?: string): SafeHtml {
  const logo = account.logo;
  const current = logo
    ? html`<figure class="logo-preview"><img src="${PATH}/logo" alt="Your logo" width="${String(Math.min(logo.width, 240))}"><figcaption>${logo.content_type === "image/png" ? "PNG" : "JPEG"}, ${String(logo.width)}×${String(logo.height)} pixels, ${logo.size.toLocaleString("en-US")} bytes</figcaption></figure>
<form method="post" action="${PATH}/logo/delete" class="actions">${csrfField(viewer.ctx)}<button type="submit" class="danger">Remove logo</button></form>`
    : html`<p class="hint">No logo yet: invoices print your name instead.</p>`;
  return html`<section class="card" aria-labelledby="logo-heading">
<h2 id="logo-heading">Logo</h2>
${current}
<form class="stack" method="post" action="${PATH}/logo" enctype="multipart/form-data">
  ${csrfField(viewer.ctx)}
  <div><label for="profile-logo">${logo ? "Replace the logo" : "Upload a logo"} <span class="hint">(PNG or JPEG, at most 1 MiB and 4000 pixels a side)</span></label><input id="profile-logo" name="logo" type="file" accept="image/png,image/jpeg" required${invalidAttributes("profile-logo", error)}>${fieldError("profile-logo", error)}</div>
  <div><button type="submit">Upload logo</button></div>
</form>
</section>`;
}

async function profilePage(
  deps: DashboardDeps,
  viewer: Viewer,
  options: { values?: ProfileValues; errors?: FieldErrors; logoError?: string; flash?: Flash | undefined } = {},
): Promise<string> {
  const account = await deps.services.account.get(viewer.session.actor);
  const content = html`${settingsNav(viewer.ctx.path)}${profileForm(viewer, account, options.values ?? valuesOf(account), options.errors ?? {})}${logoSection(viewer, account, options.logoError)}`;
  return page(viewer.ctx, "Invoice profile", content, { flash: options.flash });
}

class FormExpired extends DomainError {
  readonly kind = "forbidden" as const;
  constructor() {
    super("The form's token does not match this session", "csrf_token_mismatch");
  }
}

export async function accountPages(app: FastifyInstance, deps: DashboardDeps): Promise<void> {
  app.get<{ Querystring: { done?: string } }>(PATH, async (request, reply) => {
    const viewer = viewerOf(request);
    return sendPage(reply, await profilePage(deps, viewer, { flash: doneFlash(DONE, request.query.done) }));
  });

  app.post(PATH, async (request, reply) => {
    const viewer = viewerOf(request);
    const form = formOf(request);
    const values: ProfileValues = {};
    for (const name of [...TEXT_FIELDS, "paper_size", "payment_terms_days"] as const) {
      // A browser sends a textarea's line breaks as CRLF: kept as the API's "\n", as an API client sends them.
      values[name] = field(form, name)?.replace(/\r\n?/g, "\n");
    }
    try {
      const terms = values.payment_terms_days;
      const input = parseWith(updateAccountInput, {
        // A blank text field clears it: the form always sends them all.
        ...Object.fromEntries(TEXT_FIELDS.map((name) => [name, values[name] ?? null])),
        paper_size: values.paper_size,
        payment_terms_days: terms === undefined ? undefined : /^-?\d+$/.test(terms) ? Number(terms) : terms,
      });
      await deps.services.account.update(viewer.session.actor, input);
      return seeOther(reply, `${PATH}?done=saved`);
    } catch (error) {
      const { status, flash, fields } = formFailure(error, (path) => (path in values ? path : undefined), LABELS);
      return sendPage(reply, await profilePage(deps, viewer, { values, errors: fields, flash }), status);
    }
  });

  app.get(`${PATH}/logo`, async (request, reply) => {
    const logo = await deps.services.account.logo(viewerOf(request).session.actor);
    return reply
      .header("content-type", logo.contentType)
      .header("cache-control", "private, no-store")
      .header("x-content-type-options", "nosniff")
      .send(Buffer.from(logo.bytes));
  });

  app.post(
    `${PATH}/logo`,
    { config: { multipartForm: true } },
    async (request: FastifyRequest, reply: FastifyReply) => {
      const viewer = viewerOf(request);
      const token = request.dashboard!.token;
      const csrf = (fields: URLSearchParams) => {
        if (!deps.services.access.csrfTokenMatches(token, fields.get("_csrf") ?? undefined)) throw new FormExpired();
      };
      try {
        const form = await readMultipartForm(request, {
          fileField: "logo",
          maxFileBytes: MAX_LOGO_BYTES,
          maxFileWords: "1 MiB (1,048,576 bytes)",
          maxFieldBytes: 4096,
          maxFields: 1,
          beforeFile: csrf,
        });
        csrf(form.fields);
        if (!form.file || form.file.bytes.length === 0) {
          throw new ValidationError("Choose a PNG or JPEG file to upload", "invalid_logo", [
            { path: "logo", message: "Choose a PNG or JPEG file to upload." },
          ]);
        }
        await deps.services.account.putLogo(viewer.session.actor, form.file.bytes);
        return seeOther(reply, `${PATH}?done=logo`);
      } catch (error) {
        if (error instanceof FormExpired) return sendFormExpired(reply);
        if (error instanceof ForbiddenError) throw error;
        const { status, fields, flash } = formFailure(error, () => "logo");
        const message = fields.logo ?? flash.message;
        return sendPage(
          reply,
          await profilePage(deps, viewer, {
            logoError: message,
            flash: { kind: "error", message: "The logo could not be taken: see the message beside the file." },
          }),
          status,
        );
      }
    },
  );

  app.post(`${PATH}/logo/delete`, async (request, reply) => {
    const viewer = viewerOf(request);
    await deps.services.account.deleteLogo(viewer.session.actor);
    return seeOther(reply, `${PATH}?done=logo-removed`);
  });
}
