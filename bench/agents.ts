// `npm run bench -- agents`: what the platform adds to an agent's steps, with
// a model that takes no time (OpenAI's fake in a process of its own,
// bench/baselines/openai-chat.ts, answering at once). On a database of its
// own, an API (as `npm run api`) and a worker (as `npm run worker`, 4 slots)
// run an agent whose model writes one draft through create_post and then
// answers: three steps (model call, tool call, model call), each recorded,
// the write and its record in one transaction, the run reserved, charged and
// settled as every job is.
//
// - Platform overhead per step: a run's time in the worker (its job's
//   started_at to finished_at, the database's clock: from the claim, through
//   loading the member, agent, site and conversation, every step and its
//   record, to the settling transaction with the answer and the debit), less
//   the model's own time, divided by the run's recorded steps. The model's own
//   time is what the fake's process spent answering its calls (its event
//   loop's busy time over the calls it answered), so the HTTP round trip to
//   the vendor, the adapter and the provider chain count as the platform's.
//   Runs one at a time, each submitted with Prefer: wait; p50 and p95 of
//   200, the target p50 ≤ 5 ms (issue 38). Beside it, where a run's time
//   goes, and the database round trips a run costs the worker (counted on the
//   wire by a relay, test/helpers/pg-round-trips.ts, with a second worker).
// - Runs per second: 100 runs submitted at once to the worker of 4, from the
//   first submitted to the last finished, beside 100 bare chat calls to the
//   same fake through the same adapter (the one the loop calls), 4 at a time
//   from the bench's process: what the model alone allows. Three rounds,
//   interleaved; the median round's ratio.
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { loadConfig } from '../core/config.ts';
import { adapterFor } from '../core/providers/registry.ts';
import { startRoundTripCounter } from '../test/helpers/pg-round-trips.ts';
import { median } from './compare.ts';
import { api } from './http.ts';
import { fanOut, quantile } from './jobs.ts';
import { benchLimits } from './limits.ts';
import { withOwnDatabase, workerEnv } from './own-database.ts';
import type { ApiLauncher } from './request-path.ts';

type Row = [string, string];

const concurrency = 4;
const latencyRuns = 200;
const countedRuns = 50;
const throughputRuns = 100;
const rounds = 3;
const targetMs = 5;

type JobBody = {
  id: string;
  status: string;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  output: { model: string | null } | null;
};
type RunBody = { steps: { kind: string; duration_ms: number }[] };

/** An ISO timestamp in milliseconds, with the microseconds PostgreSQL kept (Date.parse drops them). */
const preciseMs = (iso: string) => Date.parse(iso) + Number(`0.${/\.\d{3}(\d*)/.exec(iso)?.[1] ?? ''}0`);

/** The model's process: its URL, and how busy it has been over how many calls so far. */
async function startModel(apiKey: string) {
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'baselines', 'openai-chat.ts')], {
    env: { PATH: process.env.PATH, OPENAI_API_KEY: apiKey },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  const waiting: ((line: string) => void)[] = [];
  createInterface({ input: child.stdout }).on('line', (line) => waiting.shift()?.(line));
  const next = () =>
    Promise.race([
      new Promise<string>((resolve) => waiting.push(resolve)),
      exited.then(() => Promise.reject(new Error('the model process exited'))),
    ]);
  const { url } = JSON.parse(await next()) as { url: string };
  return {
    url,
    busy: async () => {
      const line = next();
      child.stdin.write('\n');
      return JSON.parse(await line) as { busyMs: number; answered: number };
    },
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** `npm run worker` on `databaseUrl`, resolved once it says it started; its log is read and dropped. */
async function startWorkerProcess(env: Record<string, string>) {
  const child = spawn(process.execPath, [path.join(import.meta.dirname, '..', 'worker', 'main.ts')], {
    env: { PATH: process.env.PATH, LOG_LEVEL: 'info', ...benchLimits, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    const lines = createInterface({ input: child.stdout });
    const onLine = (line: string) => {
      if (!line.includes('"msg":"worker started"')) return;
      lines.off('line', onLine);
      // Drained from now on, so that the worker never waits on a full pipe.
      lines.on('line', () => {});
      resolve();
    };
    lines.on('line', onLine);
    void exited.then(() => reject(new Error('the worker process exited before it started')));
  });
  return {
    stop: async () => {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** The bootstrap admin's token on the platform (its local default credentials). */
async function signIn(url: string): Promise<string> {
  const answer = await fetch(`${url}/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin@example.com', password: 'change-me-now' }),
  });
  return ((await answer.json()) as { access_token: string }).access_token;
}

/** A tenant the admin belongs to, its site, credits there, and an agent assigned to it that may create_post. */
async function agentOnSite(url: string, token: string) {
  const me = await api<{ id: string }>(`${url}/auth/currentuser`, token, 'GET');
  const tenant = await api<{ id: string }>(`${url}/admin/tenants/`, token, 'POST', { name: 'Agents bench' });
  await api(`${url}/admin/tenants/${tenant.id}/users/${me.id}`, token, 'POST', { role: 'admin' });
  const site = await api<{ slug: string }>(`${url}/sites/`, token, 'POST', {
    tenant_id: tenant.id,
    name: 'Agents bench',
    slug: `agents-bench-${Date.now()}`,
  });
  await api(`${url}/${site.slug}/transactions/credits/add`, token, 'POST', { user_id: me.id, amount: 10_000_000 });
  const agent = await api<{ id: string }>(`${url}/api/agents`, token, 'POST', {
    name: 'Bench writer',
    instructions: 'You write short drafts.',
    tools: ['create_post'],
  });
  await api(`${url}/api/agents/${agent.id}/tenants/${tenant.id}`, token, 'POST');
  return { runs: `${url}/${site.slug}/agents/${agent.id}/runs`, jobs: `${url}/${site.slug}/jobs` };
}

export const agentFigures = (adminUrl: string, launchApi: ApiLauncher, dataDir: string) =>
  withOwnDatabase(adminUrl, 'bench_agents', concurrency, (databaseUrl) => figures(databaseUrl, launchApi, dataDir));

async function figures(databaseUrl: string, launchApi: ApiLauncher, dataDir: string): Promise<Row[]> {
  const apiKey = `sk-bench-${randomBytes(12).toString('hex')}`;
  const model = await startModel(apiKey);
  const providers = {
    TEXT_PROVIDERS: 'openai',
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: apiKey,
    OPENAI_TEXT_PRICES: 'gpt-5.4-mini=2',
  };
  let platform: Awaited<ReturnType<ApiLauncher>> | undefined;
  let worker: Awaited<ReturnType<typeof startWorkerProcess>> | undefined;
  let counter: Awaited<ReturnType<typeof startRoundTripCounter>> | undefined;
  const startWorker = (url: string) =>
    startWorkerProcess({
      ...providers,
      DATABASE_URL: url,
      DATA_DIR: dataDir,
      WORKER_CONCURRENCY: String(concurrency),
      JOB_TENANT_CONCURRENCY: String(concurrency),
    });
  try {
    platform = await launchApi(databaseUrl, providers);
    worker = await startWorker(databaseUrl);
    const token = await signIn(platform.url);
    const { runs, jobs } = await agentOnSite(platform.url, token);
    const startRun = (wait?: number) =>
      api<JobBody>(runs, token, 'POST', { input: 'Write a short draft.' }, wait ? { Prefer: `wait=${wait}` } : {});
    const finished = async (id: string) => {
      const job = await api<JobBody>(`${jobs}/${id}`, token, 'GET', undefined, { Prefer: 'wait=55' });
      if (job.status !== 'succeeded') throw new Error(`an agent run ended ${job.status}`);
      return job;
    };
    const oneAtATime = async (count: number) => {
      const done: { job: JobBody; run: RunBody }[] = [];
      for (let i = 0; i < count; i++) {
        const job = await finished((await startRun(30)).id);
        done.push({ job, run: await api<RunBody>(`${runs}/${job.id}`, token, 'GET') });
      }
      return done;
    };

    // Warm: the first runs load and compile what later runs reuse.
    await oneAtATime(10);
    const before = await model.busy();
    const timed = await oneAtATime(latencyRuns);
    const after = await model.busy();
    const modelMsPerCall = (after.busyMs - before.busyMs) / (after.answered - before.answered);
    const perStep: number[] = [];
    const gross: number[] = [];
    /** Per run: its model calls' and tool calls' recorded durations, and the rest of its time. */
    const inModel: number[] = [];
    const inTools: number[] = [];
    const rest: number[] = [];
    for (const { job, run } of timed) {
      const ms = preciseMs(job.finished_at!) - preciseMs(job.started_at!);
      const sum = (kind: string) =>
        run.steps.filter((step) => step.kind === kind).reduce((total, step) => total + step.duration_ms, 0);
      const calls = run.steps.filter((step) => step.kind === 'model').length;
      perStep.push((ms - calls * modelMsPerCall) / run.steps.length);
      gross.push(ms);
      inModel.push(sum('model'));
      inTools.push(sum('tool'));
      rest.push(ms - sum('model') - sum('tool'));
    }
    const steps = timed[0]!.run.steps.length;
    for (const list of [perStep, gross, inModel, inTools, rest]) list.sort((a, b) => a - b);

    // A bare chat call through the adapter the loop calls, to the same fake.
    const modelName = timed[0]!.job.output?.model ?? 'gpt-5.4-mini';
    const adapter = adapterFor(loadConfig({ ...workerEnv(databaseUrl, concurrency), ...providers }), 'text', 'openai');
    const bare = () =>
      adapter.chat(
        {
          messages: [
            { role: 'system', content: 'You write short drafts.' },
            { role: 'user', content: 'Write a short draft.' },
          ],
          temperature: 0.7,
        },
        { model: modelName, signal: AbortSignal.timeout(30_000) },
      );
    for (let i = 0; i < 20; i++) await bare();
    const alone: number[] = [];
    for (let i = 0; i < latencyRuns; i++) {
      const began = performance.now();
      await bare();
      alone.push(performance.now() - began);
    }
    alone.sort((a, b) => a - b);

    // Runs per second beside bare chat calls, round by round.
    const results: { runs: number; calls: number }[] = [];
    for (let round = 0; round < rounds; round++) {
      const submitted: JobBody[] = [];
      await fanOut(throughputRuns, 8, async () => submitted.push(await startRun()));
      const done = [];
      for (const job of submitted) done.push(await finished(job.id));
      const first = Math.min(...done.map((job) => preciseMs(job.created_at)));
      const last = Math.max(...done.map((job) => preciseMs(job.finished_at!)));
      const began = performance.now();
      await fanOut(throughputRuns, concurrency, bare);
      const calls = (throughputRuns / (performance.now() - began)) * 1000;
      results.push({ runs: (throughputRuns / (last - first)) * 1000, calls });
    }
    const ratios = results.map((result) => result.runs / result.calls);

    // The worker's database round trips per run, on a second worker whose connections go through the relay.
    await worker.stop();
    counter = await startRoundTripCounter(databaseUrl);
    worker = await startWorker(counter.url);
    await oneAtATime(5);
    counter.reset();
    await oneAtATime(countedRuns);
    const tripsPerRun = counter.count() / countedRuns;

    const p50 = quantile(perStep, 0.5);
    const ms = (value: number) => value.toFixed(2);
    return [
      [
        `Agent run of ${steps} steps (model, create_post, model), zero-latency model: platform overhead per step, ` +
          `p50 / p95 of ${latencyRuns} runs one at a time (target p50 ≤ ${targetMs} ms)`,
        `${ms(p50)} / ${ms(quantile(perStep, 0.95))} ms — ${p50 <= targetMs ? 'meets the target' : 'MISSES the target'}`,
      ],
      [
        'Agent run: started → finished in the worker, p50 / p95 (the model’s own time included)',
        `${ms(quantile(gross, 0.5))} / ${ms(quantile(gross, 0.95))} ms`,
      ],
      [
        'Agent run: the model’s own time per call (the fake’s process busy over its calls)',
        `${modelMsPerCall.toFixed(3)} ms`,
      ],
      [
        'Agent run, where its time goes, p50 per run: its model calls (provider chain, adapter, HTTP, the model) / ' +
          'its create_post step (the write and its record) / the rest (claim, loading, progress, records, settling)',
        `${ms(quantile(inModel, 0.5))} / ${ms(quantile(inTools, 0.5))} / ${ms(quantile(rest, 0.5))} ms`,
      ],
      [
        `Agent run: the worker's database round trips per run (${countedRuns} runs, heartbeats and polls included)`,
        tripsPerRun.toFixed(1),
      ],
      [
        `A bare chat call to the same fake through the same adapter, one at a time, p50 / p95 of ${latencyRuns}`,
        `${ms(quantile(alone, 0.5))} / ${ms(quantile(alone, 0.95))} ms`,
      ],
      [
        `Agent runs per second, ${throughputRuns} submitted at once, worker of ${concurrency}, ${rounds} rounds`,
        results.map((result) => result.runs.toFixed(1)).join(', '),
      ],
      [
        `Bare chat calls per second to the same fake through the same adapter, ${throughputRuns}, ${concurrency} at a time`,
        results.map((result) => result.calls.toFixed(0)).join(', '),
      ],
      [
        'Agent runs / bare chat calls per second, median round (each run makes 2 model calls)',
        `${median(ratios).toFixed(3)} (${Math.min(...ratios).toFixed(3)}–${Math.max(...ratios).toFixed(3)})`,
      ],
    ];
  } finally {
    await worker?.stop();
    await counter?.close();
    await platform?.stop();
    await model.stop();
  }
}
