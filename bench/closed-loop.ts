// Latency under concurrency for npm run bench: `clients` loops, each sending
// its next request as soon as its last answer is read (a closed loop, as
// browsers and agents behave), for a fixed time.
export type Latencies = { p50: number; p95: number; p99: number; perSecond: number; failures: number };

/** Runs the loops for `seconds`; `send(n)` makes the n-th request and answers whether it succeeded. */
export async function closedLoop(
  send: (n: number) => Promise<boolean>,
  seconds: number,
  clients: number,
): Promise<Latencies> {
  const samples: number[] = [];
  let failures = 0;
  let next = 0;
  const began = performance.now();
  const until = began + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (performance.now() < until) {
        const start = performance.now();
        if (!(await send(next++))) failures++;
        samples.push(performance.now() - start);
      }
    }),
  );
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0;
  return {
    p50: at(0.5),
    p95: at(0.95),
    p99: at(0.99),
    perSecond: samples.length / ((performance.now() - began) / 1000),
    failures,
  };
}

export const describeLatencies = (l: Latencies) =>
  `p50 ${l.p50.toFixed(1)} ms, p95 ${l.p95.toFixed(1)} ms, p99 ${l.p99.toFixed(1)} ms; ${l.perSecond.toFixed(0)} req/s` +
  (l.failures ? `; ${l.failures} failed` : '');
