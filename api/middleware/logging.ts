// One structured log line per request, bound to the request id.
import type { IncomingMessage } from 'node:http';
import { pinoHttp } from 'pino-http';
import type { Logger } from '../../core/logger.ts';

export function requestLogging(logger: Logger) {
  return pinoHttp({
    logger,
    genReqId: (req) => (req as IncomingMessage & { id: string }).id,
    // Health probes arrive every few seconds from orchestrators; they would drown the log.
    autoLogging: { ignore: (req) => req.url?.startsWith('/health') ?? false },
    customLogLevel: (_req, res, error) =>
      error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
    serializers: {
      req: (req: { id: string; method: string; url: string }) => ({ id: req.id, method: req.method, url: req.url }),
      res: (res: { statusCode: number }) => ({ status: res.statusCode }),
    },
  });
}
