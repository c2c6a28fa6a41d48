// Providers that misbehave, on 127.0.0.1 (OpenAI's strict fake,
// test/helpers/fakes/openai.ts, the only provider of speech and images here,
// so a failure is the job's): one that hangs, answers slowly (within AI_TIMEOUT_MS and past it), stops or
// breaks off halfway, answers garbage (not JSON, the wrong shape, the wrong
// content type, bytes that are no audio or image), or answers 500 or 429 with
// Retry-After. What is transient (no answer in time, an answer cut short,
// 5xx, 429) is retried — after the Retry-After, when there is one — and fails
// with its code once the attempts are spent; garbage fails at once as
// provider_invalid_response. Whatever happens, the credits come back and a
// failure debits nothing.
import request from 'supertest';
import { z } from 'zod';
import { readBalance, userAccount } from '../../core/credits/accounts.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import { sql } from '../../db/pool.ts';
import { retryAfter } from '../../core/providers/http.ts';
import type { WorkerHandle } from '../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { newSite, newTenant, signedIn, type Caller } from '../helpers/factories.ts';
import { rateLimited, serverError, startFakeOpenAI, type FakeOpenAI, type Script } from '../helpers/fakes/openai.ts';
import { giveCredits, ledgerFor, startTestWorker, waitForJob } from '../helpers/jobs.ts';
import { expectLedgerHolds } from '../helpers/ledger.ts';

// Short, so that each of the five timeouts below costs a second, not the minute of production; a slow answer
// within it (300 ms) stays well inside it.
const timeoutMs = 1000;

let t: TestApp;
let fake: FakeOpenAI;
let worker: WorkerHandle;
let site: Site;
let editor: Caller;

beforeAll(async () => {
  fake = await startFakeOpenAI();
  // The API plans each job (its providers) at submit, so it is told the providers too.
  const providers = {
    SPEECH_PROVIDERS: 'openai',
    IMAGE_PROVIDERS: 'openai',
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: fake.apiKey,
  };
  // Two attempts: a transient failure is retried once, then fails with its code.
  t = await startTestApp({ env: { ...providers, JOB_MAX_ATTEMPTS: '2' } });
  worker = await startTestWorker(t, { ...providers, AI_TIMEOUT_MS: String(timeoutMs) });
  const tenant = await newTenant(t);
  site = await newSite(t, tenant);
  editor = await signedIn(t, { tenant, role: 'editor', sites: [site] });
  await giveCredits(t, site, 10_000, editor.user.id);
});
afterEach(() => fake.reset());
afterAll(async () => {
  await worker.stop();
  await stopTestApp(t);
  await fake.close();
});

const submit = {
  speech: () => request(t.app).post(`/${site.slug}/media/tts`).set(editor.auth).send({ text: 'Are you there?' }),
  image: () => request(t.app).post(`/${site.slug}/media/generate`).set(editor.auth).send({ prompt: 'A kite' }),
};

const attempts = (jobId: string) =>
  t.services.db.any(sql.type(
    z.object({ code: z.string().nullable(), started_at: z.string(), finished_at: z.string().nullable() }),
  )`
    select error->>'code' as code, started_at, finished_at from job_attempts where job_id = ${jobId} order by attempt`);

const balance = async () => readBalance(t.services.db, await userAccount(t.services.db, site, editor.user.id));

const json = (body: unknown): Script => ({ kind: 'raw', contentType: 'application/json', body: JSON.stringify(body) });

type Case = {
  provider: keyof typeof submit;
  scripts: Script[];
  status: 'succeeded' | 'failed';
  /** Each attempt's error code, in order (null: the attempt that succeeded). */
  errors: (string | null)[];
};

const cases: [string, Case][] = [
  [
    'a speech provider that never answers',
    {
      provider: 'speech',
      scripts: [{ kind: 'hang' }, { kind: 'hang' }],
      status: 'failed',
      errors: ['provider_timeout', 'provider_timeout'],
    },
  ],
  [
    'a speech provider slow within AI_TIMEOUT_MS',
    { provider: 'speech', scripts: [{ kind: 'ok', delayMs: 300 }], status: 'succeeded', errors: [null] },
  ],
  [
    'a speech provider slower than AI_TIMEOUT_MS once',
    {
      provider: 'speech',
      scripts: [{ kind: 'ok', delayMs: timeoutMs * 2 }],
      status: 'succeeded',
      errors: ['provider_timeout', null],
    },
  ],
  [
    'a speech provider whose answer stops halfway until the time is up',
    { provider: 'speech', scripts: [{ kind: 'stall' }], status: 'succeeded', errors: ['provider_timeout', null] },
  ],
  [
    'a speech provider whose answer breaks off',
    {
      provider: 'speech',
      scripts: [{ kind: 'truncated' }],
      status: 'succeeded',
      errors: ['provider_unavailable', null],
    },
  ],
  [
    'a speech provider that answers bytes that are no audio',
    {
      provider: 'speech',
      scripts: [{ kind: 'raw', contentType: 'audio/wav', body: 'RIFF, but not really' }],
      status: 'failed',
      errors: ['provider_invalid_response'],
    },
  ],
  [
    'a speech provider that answers JSON instead of audio',
    { provider: 'speech', scripts: [json({ error: 'oops' })], status: 'failed', errors: ['provider_invalid_response'] },
  ],
  [
    'a speech provider that answers 500 every time',
    {
      provider: 'speech',
      scripts: [
        { kind: 'refuse', refusal: serverError() },
        { kind: 'refuse', refusal: serverError() },
      ],
      status: 'failed',
      errors: ['provider_unavailable', 'provider_unavailable'],
    },
  ],
  [
    'an image provider that answers something that is not JSON',
    {
      provider: 'image',
      scripts: [{ kind: 'raw', contentType: 'application/json', body: '{"data": [oops' }],
      status: 'failed',
      errors: ['provider_invalid_response'],
    },
  ],
  [
    'an image provider that answers JSON of the wrong shape',
    { provider: 'image', scripts: [json({ data: [] })], status: 'failed', errors: ['provider_invalid_response'] },
  ],
  [
    'an image provider that answers a web page',
    {
      provider: 'image',
      scripts: [{ kind: 'raw', contentType: 'text/html', body: '<html>Service busy</html>' }],
      status: 'failed',
      errors: ['provider_invalid_response'],
    },
  ],
  [
    'an image provider that answers base64 of something that is not an image',
    {
      provider: 'image',
      scripts: [json({ data: [{ b64_json: Buffer.from('hello').toString('base64') }] })],
      status: 'failed',
      errors: ['provider_invalid_response'],
    },
  ],
  [
    'an image provider whose JSON breaks off',
    {
      provider: 'image',
      scripts: [{ kind: 'truncated' }],
      status: 'succeeded',
      errors: ['provider_unavailable', null],
    },
  ],
  [
    'an image provider whose JSON stops halfway until the time is up',
    { provider: 'image', scripts: [{ kind: 'stall' }], status: 'succeeded', errors: ['provider_timeout', null] },
  ],
];

it.each(cases)(
  '%s: the job ends as it should and the credits come back',
  async (_name, c) => {
    const before = await balance();
    fake.script(c.provider === 'speech' ? 'audio/speech' : 'images/generations', ...c.scripts);
    const job = (await submit[c.provider]().expect(202)).body as { id: string; credits_reserved: number };
    const done = await waitForJob(t, job.id, ['succeeded', 'failed', 'canceled'], 60_000);
    expect(done).toMatchObject({ status: c.status, attempts: c.errors.length });
    expect((await attempts(job.id)).map((attempt) => attempt.code)).toEqual(c.errors);
    const ledger = (await ledgerFor(t, job.id)).map((entry) => entry.kind);
    if (c.status === 'failed') {
      expect(done).toMatchObject({
        credits_charged: 0,
        media_id: null,
        error: { code: c.errors.at(-1), transient: false },
      });
      expect(ledger).toEqual(['reservation', 'release']);
      expect(await balance()).toEqual(before);
    } else {
      expect(done.output).toMatchObject({ provider: 'openai', placeholder: false });
      expect(ledger.filter((kind) => kind === 'debit')).toHaveLength(1);
      expect(await balance()).toMatchObject({ balance: before.balance - done.credits_charged, reserved: 0 });
    }
    await expectLedgerHolds(t);
  },
  60_000,
);

it('waits as long as a 429’s Retry-After asks before the next attempt', async () => {
  fake.script('audio/speech', { kind: 'refuse', refusal: rateLimited(4) });
  const job = (await submit.speech().expect(202)).body as { id: string };
  const done = await waitForJob(t, job.id, ['succeeded', 'failed', 'canceled'], 60_000);
  expect(done).toMatchObject({ status: 'succeeded', attempts: 2 });
  const [first, second] = await attempts(job.id);
  expect(first!.code).toBe('provider_unavailable');
  // graphile-worker's own backoff after a first attempt is e¹ ≈ 2.7 s; the provider asked for 4.
  expect(Date.parse(second!.started_at) - Date.parse(first!.finished_at!)).toBeGreaterThanOrEqual(4000);
  expect(await balance()).toMatchObject({ reserved: 0 });
}, 60_000);

it('reads Retry-After in seconds or as a date, and waits an hour at most', () => {
  const now = Date.parse('2026-11-20T10:00:00Z');
  expect(retryAfter('30', now)).toBe(30_000);
  expect(retryAfter('Fri, 20 Nov 2026 10:02:00 GMT', now)).toBe(120_000);
  expect(retryAfter('Fri, 20 Nov 2026 09:00:00 GMT', now)).toBe(0);
  expect(retryAfter('86400', now)).toBe(3_600_000);
  expect(retryAfter('soon', now)).toBeUndefined();
  expect(retryAfter('1.5', now)).toBeUndefined();
  expect(retryAfter(null, now)).toBeUndefined();
});
