// The process's event-loop delay, sampled by Node from the first time it is
// asked for: how long callbacks waited past their time (a busy loop delays
// every request in the process).
import { monitorEventLoopDelay } from 'node:perf_hooks';

let histogram: ReturnType<typeof monitorEventLoopDelay> | undefined;
let started = 0;

export function eventLoopDelay(): { p50_ms: number; p99_ms: number; max_ms: number; sampling_since_s: number } {
  if (!histogram) {
    histogram = monitorEventLoopDelay({ resolution: 20 });
    histogram.enable();
    started = performance.now();
  }
  const ms = (ns: number) => (Number.isFinite(ns) ? Math.round(ns / 10_000) / 100 : 0);
  return {
    p50_ms: ms(histogram.percentile(50)),
    p99_ms: ms(histogram.percentile(99)),
    max_ms: ms(histogram.max),
    sampling_since_s: Math.round((performance.now() - started) / 1000),
  };
}
