// HTTP load for npm run bench: wrk when it is installed (a C client that
// leaves the two cores to the servers), else autocannon in a child process.
// Every figure of a run comes from the same client, so ratios between the
// API and the bare baselines compare like with like.
import { execFile, spawnSync } from 'node:child_process';
import { promisify } from 'node:util';

export type Load = { client: string; perSecond: number; p50: number; p99: number; non2xx: number };

export type LoadOptions = {
  connections?: number;
  seconds?: number;
  headers?: Record<string, string>;
  /** Every answer is a 304 (a revalidation with If-None-Match), not a 2xx. */
  notModified?: boolean;
};

const run = promisify(execFile);
const hasWrk = spawnSync('wrk', ['--version']).error === undefined;

export const loadClient = hasWrk ? 'wrk -t2' : 'autocannon';

/** wrk prints latencies as 1.23ms, 456.00us or 1.02s. */
function milliseconds(text: string): number {
  const match = /^([\d.]+)(us|ms|s)$/.exec(text.trim());
  if (!match) return Number.NaN;
  const value = Number(match[1]);
  return match[2] === 'us' ? value / 1000 : match[2] === 's' ? value * 1000 : value;
}

async function withWrk(
  url: string,
  connections: number,
  seconds: number,
  headers: Record<string, string>,
): Promise<Load> {
  const args = [
    '-t2',
    `-c${connections}`,
    `-d${seconds}s`,
    '--latency',
    ...Object.entries(headers).flatMap(([name, value]) => ['-H', `${name}: ${value}`]),
    url,
  ];
  const { stdout } = await run('wrk', args);
  const perSecond = Number(/Requests\/sec:\s+([\d.]+)/.exec(stdout)?.[1]);
  const p50 = milliseconds(/\s50%\s+(\S+)/.exec(stdout)?.[1] ?? '');
  const p99 = milliseconds(/\s99%\s+(\S+)/.exec(stdout)?.[1] ?? '');
  const non2xx = Number(/Non-2xx or 3xx responses:\s+(\d+)/.exec(stdout)?.[1] ?? 0);
  return { client: 'wrk', perSecond, p50, p99, non2xx };
}

async function withAutocannon(
  url: string,
  connections: number,
  seconds: number,
  headers: Record<string, string>,
): Promise<Load> {
  const bin = new URL('../node_modules/autocannon/autocannon.js', import.meta.url).pathname;
  const args = [
    bin,
    '--json',
    '-c',
    String(connections),
    '-d',
    String(seconds),
    ...Object.entries(headers).flatMap(([name, value]) => ['-H', `${name}=${value}`]),
    url,
  ];
  const { stdout } = await run(process.execPath, args, { maxBuffer: 16 * 1024 * 1024 });
  const result = JSON.parse(stdout) as {
    requests: { average: number };
    latency: { p50: number; p99: number };
    non2xx: number;
  };
  return {
    client: 'autocannon',
    perSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
  };
}

/** Warms the target for a second, then loads it; throws when any answer was not 2xx (or, if so told, when none was). */
export async function load(url: string, options: LoadOptions = {}): Promise<Load> {
  const connections = options.connections ?? 32;
  const seconds = options.seconds ?? 8;
  const headers = options.headers ?? {};
  const measure = hasWrk ? withWrk : withAutocannon;
  await measure(url, connections, 1, headers);
  const result = await measure(url, connections, seconds, headers);
  if (options.notModified && result.non2xx === 0) throw new Error(`${url} answered 2xx, not 304`);
  if (!options.notModified && result.non2xx > 0) throw new Error(`${url} answered ${result.non2xx} times outside 2xx`);
  return result;
}
