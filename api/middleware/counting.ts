// Counts every answered request that reached an endpoint: its site (when the
// route resolved one), its manifest route (set by the dispatcher), its status
// class and how long it took; and, whatever the path, answers that tell of
// probing (401, 403, 404, 405) by client network, for the security dashboard.
// In memory only (core/statistics/recorder.ts). Called from the request log's
// own end-of-request listener (./logging.ts) rather than from a listener of
// its own: a second listener and clock read per request cost a measurable
// share of a cheap read's throughput.
import type { BareRequest, BareResponse } from '../bare.ts';
import { networkOf } from '../../core/net/client-network.ts';
import type { SignalKind, StatisticsRecorder } from '../../core/statistics/recorder.ts';

export type RequestCounter = (req: BareRequest, res: BareResponse, ms: number) => void;

const signals: Partial<Record<number, SignalKind>> = {
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  405: 'method_not_allowed',
};

/**
 * `countRequests` false (STATS_COUNTING=false) leaves only the security
 * signals counted; `address` is the client's (./rate-limit.ts clientAddress).
 */
export function requestCounter(
  statistics: StatisticsRecorder,
  countRequests: boolean,
  address: (req: BareRequest) => string | undefined,
): RequestCounter {
  return (req, res, ms) => {
    const status = res.statusCode;
    const route = res.locals.route as string | undefined;
    if (countRequests && route)
      statistics.request((res.locals.siteId as string | undefined) ?? null, route, status, ms);
    const signal = status >= 401 && status <= 405 ? signals[status] : undefined;
    if (signal) statistics.signal(signal, networkOf(address(req)).network);
  };
}
