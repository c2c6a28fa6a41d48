// This process's own Prometheus metrics, one registry per process: prom-client's
// runtime metrics under their standard names (`process_*`, `nodejs_*`, which
// stock dashboards look for), and the platform's own under the `cap_` prefix:
// jobs finished, their wait and run times (counted by the worker that settles
// them, worker/jobs/run.ts, or by the process that canceled them before any
// worker ran them, core/jobs/cancel.ts), and HTTP requests by route key (api/middleware/
// request-metrics.ts). The API serves it at /metrics beside the database
// gauges (core/jobs/metrics.ts); a worker on WORKER_METRICS_PORT
// (worker/metrics-server.ts). Prometheus sums the counters across processes.
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';

/** The prefix of every metric the platform defines itself. */
export const prefix = 'cap_';

// Seconds: from a quick text job to a long video, or a backlog of an hour.
const jobBuckets = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600];
// Seconds: from a cached read to a route's own timeout.
const requestBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export type ProcessMetrics = {
  registry: Registry;
  jobsFinished: Counter<'kind' | 'outcome'>;
  jobFailures: Counter<'kind' | 'code'>;
  jobWait: Histogram<'kind'>;
  jobRun: Histogram<'kind'>;
  httpRequests: Counter<'route' | 'status'>;
  httpDuration: Histogram<'route' | 'status_class'>;
};

function build(): ProcessMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const registers = [registry];
  return {
    registry,
    jobsFinished: new Counter({
      name: `${prefix}jobs_finished_total`,
      help:
        'Jobs this process settled for good, per kind and outcome (succeeded, failed, canceled: by the worker ' +
        'running it, else by the process that canceled it)',
      labelNames: ['kind', 'outcome'],
      registers,
    }),
    jobFailures: new Counter({
      name: `${prefix}job_failures_total`,
      help: 'Jobs this process failed for good, per kind and error code',
      labelNames: ['kind', 'code'],
      registers,
    }),
    jobWait: new Histogram({
      name: `${prefix}job_wait_seconds`,
      help: 'Time from a finished job’s creation to its first start, per kind',
      labelNames: ['kind'],
      buckets: jobBuckets,
      registers,
    }),
    jobRun: new Histogram({
      name: `${prefix}job_run_seconds`,
      help: 'Time from a finished job’s first start to its end (retries and provider waits included), per kind',
      labelNames: ['kind'],
      buckets: jobBuckets,
      registers,
    }),
    httpRequests: new Counter({
      name: `${prefix}http_requests_total`,
      help: 'HTTP requests answered, per route key (`unmatched` for paths of no route) and status',
      labelNames: ['route', 'status'],
      registers,
    }),
    httpDuration: new Histogram({
      name: `${prefix}http_request_duration_seconds`,
      help: 'Time to answer HTTP requests, per route key and status class (2xx, 4xx...)',
      labelNames: ['route', 'status_class'],
      buckets: requestBuckets,
      registers,
    }),
  };
}

let metrics: ProcessMetrics | undefined;

/** The process's metrics, made on first use (a process that never counts pays nothing). */
export function processMetrics(): ProcessMetrics {
  return (metrics ??= build());
}
