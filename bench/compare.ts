// Comparing the service with bare baselines in the same run: the baselines
// (bare Express, Express + node-postgres) started as child processes, and
// loads interleaved in rounds so that a shared machine's drift falls on all
// alike, reported as medians with each ratio taken within its round.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { load, type Load, type LoadOptions } from './load.ts';

export type Baseline = { child: ChildProcess; url: string; exited: Promise<unknown> };

export async function startBaseline(file: string, env: Record<string, string>): Promise<Baseline> {
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'baselines', file)], {
    env: { PATH: process.env.PATH, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return new Promise((resolve, reject) => {
    child.stdout?.once('data', (chunk: Buffer) =>
      resolve({ child, url: (JSON.parse(chunk.toString()) as { url: string }).url, exited }),
    );
    child.once('exit', (code) => reject(new Error(`${file} exited with ${code}`)));
  });
}

export async function stopBaseline(baseline: Baseline): Promise<void> {
  baseline.child.kill('SIGTERM');
  await baseline.exited;
}

/**
 * Loads every target in turn, `rounds` times over, so that the drift of a
 * shared machine (a neighbour's burst, a host's frequency) falls on the API and
 * its baselines alike instead of on whichever ran in that second. A first
 * round goes unrecorded: a process just started compiles its hot paths, sizes
 * its heap and prepares its statements over its first ten thousand or so
 * requests, which a long-running service does once. (Measured on the content
 * bench's uncached page, an API just started, 4-s loads one after another:
 * 1,230-1,370, 1,690-1,950, then 2,310-3,060 req/s; a bare baseline's few
 * lines warm up at once.)
 */
export async function interleaved<K extends string>(
  targets: Record<K, LoadOptions & { url: string }>,
  rounds: number,
  seconds: number,
): Promise<Record<K, Load[]>> {
  const names = Object.keys(targets) as K[];
  const results = Object.fromEntries(names.map((name) => [name, [] as Load[]])) as Record<K, Load[]>;
  for (const name of names) await load(targets[name].url, { ...targets[name], seconds });
  for (let round = 0; round < rounds; round++) {
    for (const name of names) results[name].push(await load(targets[name].url, { ...targets[name], seconds }));
  }
  return results;
}

export const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** The median round of each figure: throughput, p50 and p99 taken separately. */
export const typical = (loads: Load[]): Load => ({
  ...loads[0]!,
  perSecond: median(loads.map((l) => l.perSecond)),
  p50: median(loads.map((l) => l.p50)),
  p99: median(loads.map((l) => l.p99)),
});

export const rate = (loads: Load[]) => {
  const { perSecond, p50, p99 } = typical(loads);
  return `${perSecond.toFixed(0)} req/s, p50 ${p50.toFixed(2)} ms, p99 ${p99.toFixed(2)} ms`;
};

/** The median of the rounds' ratios, with their range: each round's target against its own round's baseline. */
export const ratio = (loads: Load[], baseline: Load[]) => {
  const ratios = loads.map((l, i) => l.perSecond / baseline[i]!.perSecond);
  return `${median(ratios).toFixed(2)}× (${Math.min(...ratios).toFixed(2)}–${Math.max(...ratios).toFixed(2)})`;
};
