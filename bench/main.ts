// npm run bench: start-up time, request latency and memory, measured on this
// machine with bounded loops against 127.0.0.1 only. Prints a table; asserts
// nothing (tests assert behaviour, this measures it).
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, closeSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fairnessFigures, rawPickupFigures, speechFigures, throughputFigures } from './jobs.ts';
import { thumbnailFigures, uploadFigures, videoFigures } from './media.ts';
import { webhookFigures } from './billing.ts';
import { countingFigures } from './statistics.ts';
import { contentFigures } from './content.ts';
import { cloneFigures } from './clone.ts';
import { requestPathFigures } from './request-path.ts';
import { postImportFigures } from './posts.ts';
import { searchFigures } from './search.ts';
import { knowledgeFigures } from './knowledge.ts';
import { replicaFigures } from './replica.ts';
import { benchLimits } from './limits.ts';
import { providerLimitFigures } from './providers.ts';
import { agentFigures } from './agents.ts';
import { poolFigures } from './pools.ts';

const root = path.join(import.meta.dirname, '..');

type Proc = { child: ChildProcess; url: string; exited: Promise<unknown> };

/**
 * Starts an entry point as its npm script does (the node flags of `npm run
 * api`, say), its log written to a file as a deployment's collector would
 * take it, rather than to a pipe this process would have to read.
 */
/** Every process the bench started that is still running: a failed figure must not leave them behind. */
const running = new Set<ReturnType<typeof spawn>>();

async function launch(entry: string, env: Record<string, string>, nodeFlags: string[] = []): Promise<Proc> {
  const logFile = path.join(mkdtempSync(path.join(os.tmpdir(), 'bench-log-')), 'out.log');
  const log = openSync(logFile, 'w');
  const child = spawn(process.execPath, [...nodeFlags, path.join(root, entry)], {
    env: { PATH: process.env.PATH, PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'info', ...benchLimits, ...env },
    stdio: ['ignore', log, 'inherit'],
  });
  closeSync(log);
  running.add(child);
  const exited = new Promise((resolve) => child.once('exit', resolve)).finally(() => running.delete(child));
  for (let i = 0; i < 600; i++) {
    const match = /"url":"(http:\/\/[^"]+)"/.exec(readFileSync(logFile, 'utf8'));
    if (match?.[1]) return { child, url: match[1], exited };
    if (child.exitCode !== null) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error(`${entry} did not start:\n${readFileSync(logFile, 'utf8')}`);
}

/** How `npm run <script>` runs its entry point: the environment it sets and node's flags ("NAME=value node --flag entry.ts"). */
function scriptLaunch(script: string): { env: Record<string, string>; flags: string[] } {
  const scripts = (
    JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> }
  ).scripts;
  const words = (scripts[script] ?? '').split(/\s+/);
  const env = Object.fromEntries(
    words
      .filter((word) => /^[A-Z_]+=/.test(word))
      .map((word) => [word.slice(0, word.indexOf('=')), word.slice(word.indexOf('=') + 1)]),
  );
  return { env, flags: words.filter((word) => word.startsWith('--')) };
}

async function untilReady(url: string): Promise<void> {
  for (let i = 0; i < 600; i++) {
    const res = await fetch(`${url}/health/ready`).catch(() => undefined);
    if (res?.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  throw new Error('not ready within 12 s');
}

async function stop(proc: Proc): Promise<void> {
  proc.child.kill('SIGTERM');
  await proc.exited;
}

const rssMb = (pid: number) =>
  Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) / 1024;

async function timeToReady(dataDir: string, env: Record<string, string> = {}): Promise<{ ms: number; proc: Proc }> {
  const started = performance.now();
  const proc = await launch('scripts/start.ts', { DATA_DIR: dataDir, ...env });
  await untilReady(proc.url);
  return { ms: performance.now() - started, proc };
}

async function latency(url: string, count: number): Promise<{ p50: number; p99: number; perSecond: number }> {
  const samples: number[] = [];
  const began = performance.now();
  for (let i = 0; i < count; i++) {
    const t = performance.now();
    const res = await fetch(url);
    await res.arrayBuffer();
    samples.push(performance.now() - t);
  }
  const total = performance.now() - began;
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0;
  return { p50: at(0.5), p99: at(0.99), perSecond: (count / total) * 1000 };
}

/** `count` requests, `width` in flight at a time; every answer must be 2xx. */
async function concurrently(url: string, count: number, width: number, init: RequestInit = {}) {
  const samples: number[] = [];
  let next = 0;
  const began = performance.now();
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < count) {
        next++;
        const t = performance.now();
        const res = await fetch(url, init);
        await res.arrayBuffer();
        if (!res.ok) throw new Error(`${url} answered ${res.status}`);
        samples.push(performance.now() - t);
      }
    }),
  );
  const total = performance.now() - began;
  samples.sort((a, b) => a - b);
  const at = (q: number) => samples[Math.min(samples.length - 1, Math.floor(q * samples.length))] ?? 0;
  return { perSecond: (count / total) * 1000, p50: at(0.5), p99: at(0.99) };
}

// `npm run bench -- request-path` runs only the sections named.
const only = new Set(process.argv.slice(2));
const section = (name: string) => only.size === 0 || only.has(name);

const rows: [string, string][] = [];
// BENCH_DATA_DIR=<dir> keeps the database there between runs, so a section's data (the search section's
// 100,000 posts take minutes to write) is written once while its queries are worked on.
const keptDir = process.env.BENCH_DATA_DIR;
const dataDir = keptDir ? path.resolve(keptDir) : mkdtempSync(path.join(os.tmpdir(), 'platform-bench-'));
mkdirSync(dataDir, { recursive: true });
chmodSync(dataDir, 0o755);
try {
  const first = await timeToReady(dataDir);
  rows.push([
    `npm start → /health/ready 200, first run${keptDir ? ' (kept data directory)' : ' (initdb)'}`,
    `${first.ms.toFixed(0)} ms`,
  ]);
  await stop(first.proc);
  // The posts section imports pages the bench serves on 127.0.0.1: this run's worker may reach loopback (the bench's only).
  const second = await timeToReady(dataDir, section('posts') ? { FETCH_ALLOW_LOOPBACK: 'true' } : {});
  rows.push(['npm start → /health/ready 200, second run', `${second.ms.toFixed(0)} ms`]);

  // The API alone, against the running embedded database, for its own RSS.
  const password = readFileSync(path.join(dataDir, 'postgres.password'), 'utf8').trim();
  const postmaster = readFileSync(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8').split('\n');
  const port = postmaster[3];
  const postgresPid = Number(postmaster[0]);
  // The API alone, as `npm run api` runs it (its environment and node flags bound its memory).
  const npmRunApi = scriptLaunch('api');
  // BENCH_CPU_PROFILE=<dir> writes a V8 CPU profile of every API process the bench starts, for finding where time goes.
  const profile = process.env.BENCH_CPU_PROFILE;
  const apiFlags = [...npmRunApi.flags, ...(profile ? ['--cpu-prof', `--cpu-prof-dir=${profile}`] : [])];
  const api = await launch(
    'api/main.ts',
    {
      ...npmRunApi.env,
      DATABASE_URL: `postgres://postgres:${password}@127.0.0.1:${port}/app`,
      DATA_DIR: dataDir,
    },
    apiFlags,
  );
  await untilReady(api.url);
  await new Promise((resolve) => setTimeout(resolve, 2000));
  rows.push(['API process RSS, idle after start', `${rssMb(api.child.pid!).toFixed(1)} MB`]);
  for (const [name, target] of [
    ['GET /health/live', '/health/live'],
    ['GET /', '/'],
    ['GET /health/ready (2 queries)', '/health/ready'],
  ] as const) {
    await latency(`${api.url}${target}`, 200);
    const result = await latency(`${api.url}${target}`, 2000);
    rows.push([
      `${name}: p50 / p99, sequential`,
      `${result.p50.toFixed(2)} / ${result.p99.toFixed(2)} ms (${result.perSecond.toFixed(0)} req/s)`,
    ]);
  }
  const logins = await concurrently(`${api.url}/auth/login`, 120, 4, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin@example.com', password: 'change-me-now', grant_type: 'password' }),
  });
  rows.push([
    'POST /auth/login (argon2id), 4 at a time',
    `${logins.perSecond.toFixed(1)} logins/s, p50 ${logins.p50.toFixed(0)} ms`,
  ]);
  const token = (
    (await (
      await fetch(`${api.url}/auth/login`, {
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ username: 'admin@example.com', password: 'change-me-now' }),
      })
    ).json()) as { access_token: string }
  ).access_token;
  const databaseUrl = `postgres://postgres:${password}@127.0.0.1:${port}/app`;
  // The server's maintenance database, for sections that make (and drop) databases of their own.
  const adminUrl = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  const launchApi = async (url: string, env: Record<string, string> = {}) => {
    const counted = await launch(
      'api/main.ts',
      { ...npmRunApi.env, DATABASE_URL: url, DATA_DIR: dataDir, ...env },
      apiFlags,
    );
    await untilReady(counted.url);
    return { url: counted.url, pid: counted.child.pid!, stop: () => stop(counted) };
  };
  if (section('request-path')) {
    rows.push(...(await requestPathFigures(api.url, token, databaseUrl, launchApi)));
    rows.push(['API process RSS after the request-path load', `${rssMb(api.child.pid!).toFixed(1)} MB`]);
  }
  if (section('content')) rows.push(...(await contentFigures(api.url, token, databaseUrl, launchApi, postgresPid)));
  if (section('billing')) rows.push(...(await webhookFigures(api.url, token, databaseUrl, launchApi)));
  if (section('statistics')) rows.push(...(await countingFigures(api.url, token, databaseUrl, launchApi)));
  if (section('search')) rows.push(...(await searchFigures(api.url, token, databaseUrl, launchApi)));
  if (section('knowledge')) {
    rows.push(...(await knowledgeFigures(api.url, token, databaseUrl, adminUrl, launchApi)));
  }
  if (section('replica')) rows.push(...(await replicaFigures(launchApi)));
  if (section('providers')) {
    // API and worker in one process (npm start) against the bench's database, with the providers' settings.
    const launchStart = async (env: Record<string, string>) => {
      const started = await launch('scripts/start.ts', { DATA_DIR: dataDir, ...env });
      await untilReady(started.url);
      return { url: started.url, stop: () => stop(started) };
    };
    rows.push(...(await providerLimitFigures(adminUrl, launchStart)));
  }
  if (section('agents')) rows.push(...(await agentFigures(adminUrl, launchApi, dataDir)));
  if (section('pools')) rows.push(...(await poolFigures(adminUrl)));
  if (section('media')) rows.push(...(await uploadFigures(api.url, token, api.child.pid!)));
  rows.push(['API process RSS after the bench', `${rssMb(api.child.pid!).toFixed(1)} MB`]);
  await stop(api);
  if (section('jobs')) rows.push(...(await speechFigures(second.proc.url, token)));
  if (section('posts')) rows.push(...(await postImportFigures(second.proc.url, token)));
  // The clone's job runs in npm start's worker.
  if (section('clone')) rows.push(...(await cloneFigures(second.proc.url, token, databaseUrl)));
  if (section('media')) {
    rows.push(...(await thumbnailFigures(second.proc.url, token)));
    rows.push(...(await videoFigures(second.proc.url, token)));
  }
  if (section('jobs')) {
    rows.push(...(await rawPickupFigures(adminUrl)));
    rows.push(...(await throughputFigures(adminUrl)));
    rows.push(...(await fairnessFigures(adminUrl)));
  }
  await stop(second.proc);
} finally {
  // After a failure, what is still running would go on polling a database that is about to go.
  // SIGTERM, so `npm start` also stops its embedded PostgreSQL.
  for (const child of running) child.kill('SIGTERM');
  if (!keptDir) rmSync(dataDir, { recursive: true, force: true });
}

const width = Math.max(...rows.map(([name]) => name.length));
process.stdout.write(`\n${rows.map(([name, value]) => `${name.padEnd(width)}  ${value}`).join('\n')}\n`);
