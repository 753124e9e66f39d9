/** The authorization server's two pages (login, consent) and its error page: plain server-rendered HTML. */

/** Headers of every page: no framing (clickjacking of the consent button), no scripts, no caching. */
export const PAGE_HEADERS = {
  "content-security-policy": "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
  "x-frame-options": "DENY",
  "cache-control": "no-store",
} as const;

const escapeHtml = (text: string) =>
  text.replace(/[&<>"']/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[c]!);

const SCOPE_TEXT: Record<string, string> = {
  "read:invoices": "Read your contracts, pricing, customers, usage events and invoices",
  "write:invoices": "Create customers and sample contracts, change pricing rules, submit usage and project invoices",
};

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)}</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f5f6f8; color: #1d2330; }
  main { max-width: 26rem; margin: 4rem auto; background: #fff; padding: 2rem; border-radius: 8px; box-shadow: 0 1px 4px #0002; }
  h1 { font-size: 1.3rem; margin-top: 0; }
  label { display: block; margin: 1rem 0 .25rem; font-weight: 600; }
  input[type=email], input[type=password] { width: 100%; box-sizing: border-box; padding: .6rem; border: 1px solid #aab; border-radius: 4px; font: inherit; }
  button { margin-top: 1.5rem; padding: .6rem 1.2rem; font: inherit; border-radius: 4px; border: 1px solid #1d4ed8; background: #1d4ed8; color: #fff; cursor: pointer; }
  button.secondary { background: #fff; color: #1d4ed8; margin-left: .5rem; }
  .error { color: #b91c1c; background: #fee2e2; padding: .5rem .75rem; border-radius: 4px; }
  ul { padding-left: 1.2rem; }
</style>
</head>
<body><main>${body}</main></body>
</html>`;
}

export function loginPage(input: { requestId: string; clientName: string; error?: string }): string {
  return page(
    "Sign in to authorize",
    `<h1>Sign in to let ${escapeHtml(input.clientName)} use your billing account</h1>
${input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : ""}
<form method="post" action="/oauth/login">
  <input type="hidden" name="request_id" value="${escapeHtml(input.requestId)}">
  <label for="email">Email</label>
  <input id="email" name="email" type="email" autocomplete="username" required autofocus>
  <label for="password">Password</label>
  <input id="password" name="password" type="password" autocomplete="current-password" required>
  <button type="submit">Sign in</button>
</form>`,
  );
}

export function consentPage(input: { requestId: string; clientName: string; email: string; scopes: string[] }): string {
  return page(
    "Allow access",
    `<h1>Allow ${escapeHtml(input.clientName)} to use your billing account?</h1>
<p>Signed in as ${escapeHtml(input.email)}. It asks to:</p>
<ul>${input.scopes.map((s) => `<li><strong>${escapeHtml(s)}</strong>: ${escapeHtml(SCOPE_TEXT[s] ?? s)}</li>`).join("")}</ul>
<form method="post" action="/oauth/consent">
  <input type="hidden" name="request_id" value="${escapeHtml(input.requestId)}">
  <button type="submit" name="decision" value="allow">Allow</button>
  <button type="submit" name="decision" value="deny" class="secondary">Deny</button>
</form>`,
  );
}

export function errorPage(message: string): string {
  return page(
    "Authorization failed",
    `<h1>Authorization failed</h1><p class="error" role="alert">${escapeHtml(message)}</p>`,
  );
}
