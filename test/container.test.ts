// The container image and the compose file as operators run them. No Docker
// engine runs here, so the test reads the commands they give and runs those
// very commands: node itself must be the first process (npm does not pass
// SIGTERM on, so `docker stop` killed the worker instead of draining it), the
// image's flags are package.json's, and SIGTERM to that process drains it.
// Production compose creates no admin with a known password. Its worker pools
// and the Procfile's split the kinds of job between them, each kind in one.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { loadConfig } from '../core/config.ts';
import { jobKindNames } from '../core/jobs/kinds.ts';
import { startTestApp, stopTestApp, type TestApp } from './helpers/app.ts';
import { newSite, newTenant, signedIn } from './helpers/factories.ts';
import { startFakeOpenAI, type FakeOpenAI } from './helpers/fakes/openai.ts';
import { giveCredits, readJob, waitForJob } from './helpers/jobs.ts';
import { pollUntil } from './helpers/poll.ts';
import { startCommand, untilReady, type Started } from './helpers/processes.ts';

const root = path.join(import.meta.dirname, '..');
const read = (file: string) => readFileSync(path.join(root, file), 'utf8');

/** The image's exec-form CMD and the variables its ENV lines set. */
function image(): { command: string[]; env: Record<string, string> } {
  const dockerfile = read('Dockerfile');
  const cmd = /^CMD (\[.*\])$/m.exec(dockerfile);
  if (!cmd) throw new Error('the Dockerfile has no exec-form CMD');
  const env = Object.fromEntries([...dockerfile.matchAll(/^ENV (\w+)=(\S+)$/gm)].map((m) => [m[1]!, m[2]!]));
  return { command: JSON.parse(cmd[1]!) as string[], env };
}

/** Each compose service's `command:` (flow-style lists, as the file writes them). */
function composeCommands(): Record<string, string[]> {
  const compose = read('docker-compose.yml');
  const commands: Record<string, string[]> = {};
  let service = '';
  for (const line of compose.split('\n')) {
    const name = /^ {2}([\w-]+):\s*$/.exec(line);
    if (name) service = name[1]!;
    const command = /^ {4}command: (\[.*\])\s*$/.exec(line);
    if (command) commands[service] = JSON.parse(command[1]!.replaceAll("'", '"')) as string[];
  }
  return commands;
}

/** The WORKER_KINDS of each pool a file (compose, Procfile) names, in order. */
const pools = (text: string) => [...text.matchAll(/WORKER_KINDS[=:] *([\w,]+)/g)].map((m) => m[1]!.split(','));

/** An npm script as environment assignments and the command line after them. */
function script(name: string): { command: string[]; env: Record<string, string> } {
  const words = (JSON.parse(read('package.json')) as { scripts: Record<string, string> }).scripts[name]!.split(' ');
  const assignments = words.filter((word) => /^\w+=/.test(word));
  return {
    env: Object.fromEntries(assignments.map((word) => word.split('=') as [string, string])),
    command: words.slice(assignments.length),
  };
}

describe('the commands', () => {
  it('runs node as the image’s first process, with the API script’s flags and environment', () => {
    const { command, env } = image();
    expect(command[0]).toBe('node');
    expect({ command, env: { ...env, NODE_ENV: undefined } }).toEqual({
      ...script('api'),
      env: { ...script('api').env, NODE_ENV: undefined },
    });
  });

  it('runs node itself in every compose service of the app, as the Procfile’s scripts do', () => {
    const commands = composeCommands();
    expect(commands.migrate).toEqual(script('migrate').command);
    expect(commands['worker-light']).toEqual(script('worker').command);
    expect(commands['worker-media']).toEqual(script('worker').command);
    // The API runs the image's own command.
    expect(commands.api).toBeUndefined();
    for (const command of Object.values(commands).filter((one) => one.some((word) => word.endsWith('.ts'))))
      expect(command[0]).toBe('node');
  });

  it('splits every kind of job between the light and the media pool, in compose and the Procfile alike', () => {
    const compose = pools(read('docker-compose.yml'));
    const procfile = pools(read('Procfile'));
    expect(compose).toHaveLength(2);
    expect(procfile).toEqual(compose);
    const named = compose.flat();
    expect(new Set(named).size).toBe(named.length);
    expect([...named].sort()).toEqual([...jobKindNames].sort());
    expect(compose[1]!.sort()).toEqual(['image', 'image_edit', 'media_process', 'video']);
  });

  it('gives production no admin with a known password: none unless the operator exports both', () => {
    const compose = read('docker-compose.yml');
    expect(compose).not.toMatch(/ADMIN_PASSWORD: *\$\{ADMIN_PASSWORD:-/);
    expect(compose).toMatch(/^ {4}ADMIN_PASSWORD: *$/m);
    // What the service then starts with, the shell having exported neither.
    expect(loadConfig({ NODE_ENV: 'production', JWT_SECRET: 'x'.repeat(32) }).admin).toBeUndefined();
  });
});

describe('SIGTERM to the first process', () => {
  let t: TestApp;
  let fake: FakeOpenAI;
  let started: Started | undefined;
  // Speech through OpenAI's strict fake; the API plans each job's providers at submit, so it is told them too.
  const providers = () => ({ SPEECH_PROVIDERS: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: fake.apiKey });
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    t = await startTestApp({ env: providers() });
  });
  afterEach(() => {
    if (started?.child.exitCode === null) started.child.kill('SIGKILL');
    started = undefined;
  });
  afterAll(async () => {
    await stopTestApp(t);
    await fake.close();
  });

  async function author() {
    const tenant = await newTenant(t);
    const site = await newSite(t, tenant);
    const user = await signedIn(t, { tenant, role: 'author', sites: [site] });
    await giveCredits(t, site, 1_000, user.user.id);
    return { site, user };
  }
  const env = () => ({
    NODE_ENV: 'test',
    LOG_LEVEL: 'info',
    DATABASE_URL: t.database.url,
    DATA_DIR: t.config.dataDir,
    ...providers(),
  });

  it('drains the compose light pool’s worker: the speech job it is running finishes once, and it exits 0', async () => {
    const who = await author();
    // An answer slow enough that the signal comes while the job runs.
    fake.script('audio/speech', { kind: 'ok', delayMs: 1500 });
    started = await startCommand(
      composeCommands()['worker-light']!,
      { ...env(), WORKER_KINDS: pools(read('docker-compose.yml'))[0]!.join(',') },
      { listens: false },
    );
    const res = await request(t.app)
      .post(`/${who.site.slug}/media/tts`)
      .set(who.user.auth)
      .send({ text: 'Drained, not killed.', format: 'wav' })
      .expect(202);
    await pollUntil(
      () => readJob(t, res.body.id),
      (job) => job.status === 'running',
      { tries: 1500, everyMs: 20 },
    );
    started.child.kill('SIGTERM');
    expect(await started.exited).toBe(0);
    const job = await waitForJob(t, res.body.id, ['succeeded', 'failed'], 10_000);
    expect(job).toMatchObject({ status: 'succeeded', attempts: 1, output: { provider: 'openai' } });
    expect(started.output()).toMatch(/"msg":"shut down"/);
  });

  it('drains the image’s API: a request in flight is answered, then it exits 0', async () => {
    const who = await author();
    const { command, env: imageEnv } = image();
    started = await startCommand(command, { ...imageEnv, ...env() });
    await untilReady(started.url);
    // No worker runs, so the submit waits out its Prefer: wait while the signal arrives.
    const answer = fetch(`${started.url}/${who.site.slug}/media/tts`, {
      method: 'POST',
      headers: { ...who.user.auth, 'Content-Type': 'application/json', Prefer: 'wait=2' },
      body: JSON.stringify({ text: 'Answered before the exit.', format: 'wav' }),
    });
    await new Promise((resolve) => setTimeout(resolve, 500));
    const signalled = Date.now();
    started.child.kill('SIGTERM');
    expect((await answer).status).toBe(202);
    expect(await started.exited).toBe(0);
    // Once answered, its keep-alive connection does not hold the exit until the shutdown deadline cuts it.
    expect(Date.now() - signalled).toBeLessThan(t.config.shutdownTimeoutMs - 5000);
  });
});
