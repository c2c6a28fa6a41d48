// One structured log line per request once it is answered (or abandoned),
// with its id, and `req.log` for whatever the request wants to log: a child
// logger bound to the request id, made only when something logs.
import type { RequestHandler } from 'express';
import { unredacted, type Logger } from '../../core/logger.ts';

declare module 'http' {
  interface IncomingMessage {
    /** The request id (./request-id.ts). */
    id: string;
    /** The process logger bound to this request's id. */
    log: Logger;
  }
}

export function requestLogging(logger: Logger): RequestHandler {
  // The access line holds only what is built below (no header, no body), so
  // it skips the redaction every other line goes through.
  const access = unredacted(logger);
  return (req, res, next) => {
    const started = performance.now();
    let bound: Logger | undefined;
    Object.defineProperty(req, 'log', { get: () => (bound ??= logger.child({ req_id: req.id })), configurable: true });
    // Health probes arrive every few seconds from orchestrators; they would drown the log.
    if (req.url.startsWith('/health')) {
      next();
      return;
    }
    res.once('close', () => {
      const status = res.statusCode;
      const line = {
        req: { id: req.id, method: req.method, url: req.originalUrl },
        res: { status },
        responseTime: Math.round(performance.now() - started),
      };
      if (!res.writableFinished) access.warn(line, 'request aborted');
      else if (status >= 500) access.error(line, 'request errored');
      else if (status >= 400) access.warn(line, 'request completed');
      else access.info(line, 'request completed');
    });
    next();
  };
}
