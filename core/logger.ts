// Structured JSON logs on stdout (pino). Secrets are redacted here, once,
// so no caller has to remember to.
import { pino, type Logger } from 'pino';

export type { Logger };

export function createLogger(level: string, bindings: Record<string, unknown> = {}): Logger {
  // Written without blocking: lines that come while a write is under way go
  // out together with the next one (one write per burst, not per line), and
  // whatever is left is written synchronously when the process exits.
  const destination = pino.destination({ dest: 1, sync: false });
  return pino(
    {
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
    },
    destination,
  );
}

/** What the access line of a request says. */
export type AccessLine = { id: string; method: string; url: string; status: number; responseTime: number };

const accessLevels = { info: 30, warn: 40, error: 50 } as const;

/**
 * Writes a request's access line: the same JSON line pino would write for
 * `logger[level]({ req: { id, method, url }, res: { status }, responseTime }, msg)`,
 * to the same destination and under the same level, but built directly:
 * every field is known and safe (no redaction pass, no serialisers), and
 * pino's general path costs a measurable share of a cached read.
 */
export function accessLog(logger: Logger): (level: keyof typeof accessLevels, line: AccessLine, msg: string) => void {
  const stream = (logger as unknown as Record<symbol, pino.DestinationStream>)[pino.symbols.streamSym]!;
  // "pid":…,"process":"api" — the base fields every line of this logger carries.
  const base = JSON.stringify({ pid: process.pid, ...logger.bindings() }).slice(1, -1);
  // Many lines share a millisecond under load: its ISO form is made once.
  let millisecond = 0;
  let time = '';
  return (level, line, msg) => {
    const value = accessLevels[level];
    if (value < logger.levelVal) return;
    const now = Date.now();
    if (now !== millisecond) time = new Date((millisecond = now)).toISOString();
    stream.write(
      `{"level":${value},"time":"${time}",${base},"req":{"id":${JSON.stringify(line.id)},` +
        `"method":${JSON.stringify(line.method)},"url":${JSON.stringify(line.url)}},"res":{"status":${line.status}},` +
        `"responseTime":${line.responseTime},"msg":${JSON.stringify(msg)}}\n`,
    );
  };
}
