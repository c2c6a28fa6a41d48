// Structured JSON logs on stdout (pino). Secrets are redacted here, once,
// so no caller has to remember to.
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  return pino({
    level,
    base: { pid: process.pid, ...bindings },
    timestamp: pino.stdTimeFunctions.isoTime,
    redact: {
      paths: [
        'req.headers.authorization',
        'req.headers.cookie',
        'res.headers["set-cookie"]',
        '*.password',
        '*.password_hash',
        '*.access_token',
        '*.refresh_token',
        '*.client_secret',
      ],
      censor: '[redacted]',
    },
  });
}
