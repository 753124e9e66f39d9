/**
 * A real SMTP server for tests (npm smtp-server) on a free loopback port: it keeps every message it accepts,
 * parsed back (mailparser), and can be told to refuse recipients or to stop answering.
 */
import type { AddressInfo } from "node:net";
import { type ParsedMail, simpleParser } from "mailparser";
import { SMTPServer } from "smtp-server";

export type SmtpMode = "accept" | "refuse" | "hang";

export interface SmtpReceiver {
  url: string;
  received: ParsedMail[];
  /** What the server does with the next recipients: accept them, refuse them (550), or never answer. */
  mode: SmtpMode;
  close(): Promise<void>;
}

export async function startSmtpReceiver(): Promise<SmtpReceiver> {
  const received: ParsedMail[] = [];
  const state = { mode: "accept" as SmtpMode };
  const server = new SMTPServer({
    authOptional: true,
    allowInsecureAuth: true,
    closeTimeout: 500,
    disabledCommands: ["STARTTLS"],
    logger: false,
    onAuth(_auth, _session, callback) {
      callback(null, { user: "test" });
    },
    onRcptTo(_address, _session, callback) {
      if (state.mode === "refuse") {
        const error = Object.assign(new Error("Mailbox unavailable: test server refuses"), { responseCode: 550 });
        callback(error);
        return;
      }
      if (state.mode === "hang") return; // never answers: the client's timeout must end it
      callback();
    },
    onData(stream, _session, callback) {
      const chunks: Buffer[] = [];
      stream.on("data", (chunk: Buffer) => chunks.push(chunk));
      stream.on("end", () => {
        simpleParser(Buffer.concat(chunks)).then(
          (mail) => {
            received.push(mail);
            callback();
          },
          (error: Error) => callback(error),
        );
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.server.address() as AddressInfo;
  return {
    url: `smtp://tester:secret@127.0.0.1:${port}`,
    received,
    get mode() {
      return state.mode;
    },
    set mode(mode: SmtpMode) {
      state.mode = mode;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
      }),
  };
}
