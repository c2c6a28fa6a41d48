// graphile-worker logs through its own Logger interface; this routes it into
// the process's pino logger so every line is structured JSON.
import { Logger as WorkerLogger } from 'graphile-worker';
import type { Logger } from './logger.ts';

export function workerLogger(logger: Logger): WorkerLogger {
  return new WorkerLogger((scope) => {
    const child = logger.child({ component: 'graphile-worker', ...scope });
    return (level, message, meta) => {
      const method = level === 'warning' ? 'warn' : level;
      child[method]({ ...meta }, message);
    };
  });
}
