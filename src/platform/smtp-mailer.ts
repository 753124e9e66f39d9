import { createTransport } from "nodemailer";

/** A message as the mail worker hands it over: plain text, simple HTML, and attachments as bytes. */
export interface OutgoingMail {
  from: string;
  to: string;
  subject: string;
  text: string;
  html: string;
  attachments: { filename: string; content: Buffer; contentType: string }[];
}

/** What sending a message came to: accepted by the SMTP server, or why not (a refusal, a timeout, no server). */
export type MailOutcome = { ok: true } | { ok: false; error: string };

export interface Mailer {
  send(mail: OutgoingMail): Promise<MailOutcome>;
  close(): void;
}

/**
 * Email through one SMTP server (BILLING_SMTP_URL: `smtp://user:pass@host:587`, STARTTLS when the server offers
 * it; `smtps://…:465`, TLS from the start). Each stage (connecting, the greeting, every reply) waits at most
 * `timeoutMs`, and a whole message at most three times that: a server that stops answering costs one attempt,
 * never a stuck worker. Never throws: a failure is an outcome, with the server's reason.
 */
export function createSmtpMailer(settings: { url: string; timeoutMs: number }): Mailer {
  const transport = createTransport({
    url: settings.url,
    connectionTimeout: settings.timeoutMs,
    greetingTimeout: settings.timeoutMs,
    socketTimeout: settings.timeoutMs,
    dnsTimeout: settings.timeoutMs,
  });
  return {
    async send(mail) {
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<MailOutcome>((resolve) => {
        timer = setTimeout(
          () => resolve({ ok: false, error: `the SMTP server did not finish within ${settings.timeoutMs * 3} ms` }),
          settings.timeoutMs * 3,
        );
      });
      try {
        return await Promise.race([
          transport.sendMail(mail).then(
            (): MailOutcome => ({ ok: true }),
            (error: unknown): MailOutcome => ({ ok: false, error: smtpReason(error) }),
          ),
          deadline,
        ]);
      } finally {
        clearTimeout(timer);
      }
    },
    close() {
      transport.close();
    },
  };
}

/** The reason a send failed, as the message log shows it: the server's reply when it gave one. Never the URL's password. */
function smtpReason(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const e = error as Error & { code?: string; response?: string; responseCode?: number };
  const reason = e.response ?? e.message;
  return (e.code ? `${e.code}: ${reason}` : reason).slice(0, 1000);
}
