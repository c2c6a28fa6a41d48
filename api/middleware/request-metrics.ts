// Counts every finished request in the process's Prometheus metrics
// (core/metrics/process.ts): by its route's declared key, never the URL
// asked (ids in paths would make a series per job), and its status; its
// time by route key and status class. Wraps the request counter
// (./counting.ts) so both are told from the request log's one listener.
import { processMetrics } from '../../core/metrics/process.ts';
import type { RequestCounter } from './counting.ts';

/** What stands for the route of a request no route answered (an unknown path, the docs, the admin page). */
export const unmatchedRoute = 'unmatched';

export function withRequestMetrics(count: RequestCounter): RequestCounter {
  const { httpRequests, httpDuration } = processMetrics();
  return (req, res, ms) => {
    const route = (res.locals.route as string | undefined) ?? unmatchedRoute;
    const status = res.statusCode;
    httpRequests.inc({ route, status: String(status) });
    httpDuration.observe({ route, status_class: `${Math.floor(status / 100)}xx` }, ms / 1000);
    count(req, res, ms);
  };
}
