// The service's own processes, started as operators start them (`npm start`,
// `npm run api`, `npm run worker`): node on the entry file, configured by the
// environment alone. Their output is kept for the test to read, and shown
// when TEST_CHILD_OUTPUT is set.
import { spawn, type ChildProcess } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { z } from 'zod';
import { sql } from '../../db/pool.ts';
import type { TestApp } from './app.ts';

const root = path.join(import.meta.dirname, '..', '..');
/**
 * Node's cache of compiled modules, shared by every process the tests start:
 * each starts about a second and a half sooner (half its start on this
 * machine), and the kill and restart tests start dozens.
 */
const compileCache = path.join(os.tmpdir(), 'content-agent-platform-test-compile-cache');

export type Started = { child: ChildProcess; url: string; output: () => string; exited: Promise<number | null> };

/**
 * Starts `entry` (e.g. api/main.ts) and waits for it to log the URL it
 * listens on; a worker, which listens on nothing, resolves at once with url ''.
 */
export function startProcess(
  entry: string,
  env: Record<string, string>,
  options: { listens?: boolean } = {},
): Promise<Started> {
  return startCommand(['node', entry], env, options);
}

/**
 * Starts a command line as an image or a Procfile writes it (`node [flags]
 * entry`, run from the checkout's root, `node` being this test's own), and
 * waits as startProcess() does.
 */
export async function startCommand(
  [program, ...args]: string[],
  env: Record<string, string>,
  options: { listens?: boolean } = {},
): Promise<Started> {
  if (program !== 'node') throw new Error(`only node commands are started here, not ${program}`);
  const entry = args.at(-1)!;
  const child = spawn(process.execPath, args, {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      PORT: '0',
      HOST: '127.0.0.1',
      WORKER_CONCURRENCY: '1',
      NODE_COMPILE_CACHE: compileCache,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => {
    output += chunk.toString();
    if (process.env.TEST_CHILD_OUTPUT) process.stderr.write(chunk);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  if (options.listens === false) return { child, url: '', output: () => output, exited };
  const deadline = Date.now() + 45_000;
  for (;;) {
    const match = /"url":"(http:\/\/[^"]+)"/.exec(output);
    if (match?.[1]) return { child, url: match[1], output: () => output, exited };
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`${entry} did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Stops it with `signal` and answers its exit code; an unexpected failure prints what it said. */
export async function stopProcess(started: Started, signal: NodeJS.Signals = 'SIGTERM'): Promise<number | null> {
  started.child.kill(signal);
  const code = await started.exited;
  if (code !== 0 && signal !== 'SIGKILL') process.stderr.write(`exit ${code}:\n${started.output()}\n`);
  return code;
}

/** Polls /health/ready until it answers 200 (or 30 s pass) and answers the last response. */
export async function untilReady(url: string): Promise<Response> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`${url}/health/ready`).catch(() => undefined);
    if (res?.status === 200 || Date.now() > deadline) return res as Response;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Two `npm run api` processes on the test app's database, both ready (their URLs read from their info logs). */
export async function twoApiProcesses(t: TestApp): Promise<[Started, Started]> {
  const env = { DATABASE_URL: t.database.url, LOG_LEVEL: 'info', NODE_ENV: 'test', DATA_DIR: t.config.dataDir };
  const started = await Promise.all([startProcess('api/main.ts', env), startProcess('api/main.ts', env)]);
  await Promise.all(started.map((one) => untilReady(one.url)));
  return started;
}

/**
 * `npm run worker` on the test app's database (its output kept quiet unless
 * TEST_CHILD_OUTPUT is set), resolved once it has registered its heartbeat.
 */
export async function startWorkerProcess(t: TestApp, env: Record<string, string>): Promise<Started> {
  const started = await startProcess(
    'worker/main.ts',
    {
      NODE_ENV: 'test',
      LOG_LEVEL: process.env.TEST_CHILD_OUTPUT ? 'info' : 'silent',
      DATABASE_URL: t.database.url,
      DATA_DIR: t.config.dataDir,
      ...env,
    },
    { listens: false },
  );
  const deadline = Date.now() + 30_000;
  while (!(await workerRegistered(t, started.child.pid!))) {
    if (Date.now() > deadline || started.child.exitCode !== null) {
      started.child.kill('SIGKILL');
      throw new Error(`the worker process did not start:\n${started.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return started;
}

/** Whether a worker process of this pid has a heartbeat row. */
export const workerRegistered = (t: TestApp, pid: number) =>
  t.services.db.exists(sql.type(z.object({}))`select 1 from worker_processes where pid = ${pid}`);
