// Counts every answered request that reached an endpoint: its site (when the
// route resolved one), its manifest route (set by the dispatcher), its status
// class and how long it took. In memory only (core/statistics/recorder.ts).
// Called from the request log's own end-of-request listener (./logging.ts)
// rather than from a listener of its own: a second listener and clock read
// per request cost a measurable share of a cheap read's throughput.
import type { Response } from 'express';
import type { StatisticsRecorder } from '../../core/statistics/recorder.ts';

export type RequestCounter = (res: Response, ms: number) => void;

export function requestCounter(statistics: StatisticsRecorder): RequestCounter {
  return (res, ms) => {
    const route = res.locals.route as string | undefined;
    if (route) statistics.request((res.locals.siteId as string | undefined) ?? null, route, res.statusCode, ms);
  };
}
