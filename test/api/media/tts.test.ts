// POST /{site}/media/tts through HTTP: the job answered (202 + Location, or
// 200 with Prefer: wait), run by a worker with the local espeak-ng provider or
// OpenAI (its strict fake), the audio stored and probed, and the credits
// reserved, debited and released exactly as priced. Also: 402 and races for a
// balance, Idempotency-Key, validation and access.
import { existsSync } from 'node:fs';
import request from 'supertest';
import { z } from 'zod';
import { readBalance, userAccount, poolAccount } from '../../../core/credits/accounts.ts';
import { estimateSeconds } from '../../../core/media/speech.ts';
import { tenantFlag } from '../../../core/jobs/queue.ts';
import { cancel } from '../../../core/jobs/cancel.ts';
import { lockJob } from '../../../core/jobs/settle.ts';
import type { Site } from '../../../core/tenancy/sites.ts';
import type { Tenant } from '../../../core/tenancy/tenants.ts';
import { sql } from '../../../db/pool.ts';
import { probe } from '../../../worker/media/ffmpeg.ts';
import type { WorkerHandle } from '../../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { newSite, newTenant, serviceAccount, signedIn, type Caller } from '../../helpers/factories.ts';
import { serverError, startFakeOpenAI, type FakeOpenAI } from '../../helpers/fakes/openai.ts';
import { giveCredits, ledgerFor, localFile, startTestWorker, waitForJob } from '../../helpers/jobs.ts';
import { toneWav } from '../../helpers/media.ts';

// The app's text limit is 100 characters: the happy paths use ~60.
const maxCharacters = 100;
// 58 characters: an estimate of ceil(58 / 12) + 1 = 6 seconds.
const sentence = 'The quick brown fox jumps over the lazy dog near the river.';

/** The app the test at hand talks to: the local one (SPEECH_PROVIDERS=local), or OpenAI's below. */
let t: TestApp;
let local: TestApp;
let worker: WorkerHandle | undefined;

beforeAll(async () => {
  local = t = await startTestApp({ env: { SPEECH_MAX_CHARACTERS: String(maxCharacters) } });
});
afterEach(async () => {
  await worker?.stop();
  worker = undefined;
  // Jobs a test left on the queue must not be run by the next test's worker.
  const open = await t.services.db.anyFirst(
    sql.type(z.object({ id: z.string() }))`select id from jobs where status in ('queued', 'running', 'waiting')`,
  );
  for (const id of open) {
    await t.services.db.transaction(async (tx) => {
      const job = await lockJob(tx, id);
      if (job) await cancel(tx, job, 'test cleanup');
    });
  }
});
afterAll(() => stopTestApp(local));

type World = { tenant: Tenant; site: Site; user: Caller };

/** A tenant, a site and an author assigned to it holding `credits` there. */
async function world(credits: number): Promise<World> {
  const tenant = await newTenant(t);
  const site = await newSite(t, tenant);
  const user = await signedIn(t, { tenant, role: 'author', sites: [site] });
  if (credits > 0) await giveCredits(t, site, credits, user.user.id);
  return { tenant, site, user };
}

const tts = (site: Site, auth: { Authorization: string } | Record<string, never>, body: unknown) =>
  request(t.app)
    .post(`/${site.slug}/media/tts`)
    .set(auth)
    .send(body as object);

const userBalance = async (site: Site, userId: string) =>
  readBalance(t.services.db, await userAccount(t.services.db, site, userId));
const poolBalance = async (tenantId: string) => readBalance(t.services.db, await poolAccount(t.services.db, tenantId));

const mediaRow = z.object({
  storage_key: z.string(),
  mime_type: z.string(),
  size_bytes: z.number(),
  duration_seconds: z.number().nullable(),
  kind: z.string(),
  status: z.string(),
});
const readMedia = (id: string) =>
  t.services.db.one(
    sql.type(
      mediaRow,
    )`select storage_key, mime_type, size_bytes, duration_seconds, kind, status from media_items where id = ${id}`,
  );

const attemptOutcomes = (jobId: string) =>
  t.services.db.anyFirst(
    sql.type(
      z.object({ outcome: z.string().nullable() }),
    )`select outcome from job_attempts where job_id = ${jobId} order by attempt`,
  );

const attemptErrors = (jobId: string) =>
  t.services.db.anyFirst(
    sql.type(
      z.object({ code: z.string().nullable() }),
    )`select error->>'code' as code from job_attempts where job_id = ${jobId} order by attempt`,
  );

const countJobs = (siteId: string) =>
  t.services.db.oneFirst(
    sql.type(z.object({ count: z.number() }))`select count(*)::int as count from jobs where site_id = ${siteId}`,
  );
const countQueued = (tenantId: string) =>
  t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from graphile_worker.jobs where task_identifier = 'job__run' and flags ? ${tenantFlag(tenantId)}`);

/** The stored file of a finished job: its media row, and what ffprobe reads in the file. */
async function storedAudio(mediaId: string) {
  const media = await readMedia(mediaId);
  const file = localFile(t, media.storage_key);
  expect(existsSync(file)).toBe(true);
  return { media, file, probed: await probe(t.config, file) };
}

describe('with the local provider (espeak-ng)', () => {
  it('answers 202 with the queued job, then speaks it to an mp3, stores it and debits the seconds made', async () => {
    const { site, user } = await world(100);
    const estimate = estimateSeconds({ text: sentence, speed: 1 });
    expect(estimate).toBe(6);
    worker = await startTestWorker(t);
    const res = await tts(site, user.auth, { text: sentence }).expect(202);
    expect(res.headers.location).toBe(`/${site.slug}/jobs/${res.body.id}`);
    expect(res.body).toMatchObject({
      site_id: site.id,
      user_id: user.user.id,
      kind: 'speech',
      status: 'queued',
      credits_reserved: estimate,
      credits_charged: 0,
      media_id: null,
      input: { text: sentence, voice: 'default', language: 'en', speed: 1, format: 'mp3' },
    });
    // The public job hides internal bookkeeping.
    expect(res.body).not.toHaveProperty('account_id');
    expect(res.body).not.toHaveProperty('tenant_id');

    const done = await waitForJob(t, res.body.id, ['succeeded', 'failed', 'canceled']);
    expect(done).toMatchObject({ status: 'succeeded', attempts: 1, progress: 1, error: null });
    expect(done.media_id).not.toBeNull();
    expect(done.media_ids).toEqual([done.media_id]);

    const { media, probed } = await storedAudio(done.media_id!);
    expect(probed.formatName).toBe('mp3');
    expect(probed.codec).toBe('mp3');
    expect(probed.durationSeconds).toBeGreaterThan(1);
    expect(probed.durationSeconds).toBeLessThan(10);
    expect(media).toMatchObject({ kind: 'audio', status: 'ready', mime_type: 'audio/mpeg' });
    expect(Math.abs(media.duration_seconds! - probed.durationSeconds)).toBeLessThanOrEqual(0.1);
    expect(media.size_bytes).toBeGreaterThan(0);
    expect(done.output).toMatchObject({
      format: 'mp3',
      characters: sentence.length,
      provider: 'local',
      model: 'local',
      placeholder: true,
      size_bytes: media.size_bytes,
    });
    // The job names who made it, as its output does.
    const answered = await request(t.app).get(`/${site.slug}/jobs/${done.id}`).set(user.auth).expect(200);
    expect(answered.body.provider).toBe('local');

    const charged = Math.min(Math.ceil(media.duration_seconds!), estimate);
    expect(done.credits_charged).toBe(charged);
    const expected = [
      { kind: 'reservation', amount: 0, reserved_change: estimate },
      { kind: 'debit', amount: -charged, reserved_change: -charged },
      ...(estimate > charged ? [{ kind: 'release', amount: 0, reserved_change: -(estimate - charged) }] : []),
    ];
    expect(await ledgerFor(t, done.id)).toEqual(expected);
    expect(await userBalance(site, user.user.id)).toEqual({
      balance: 100 - charged,
      reserved: 0,
      available: 100 - charged,
    });

    // The Location answers the same job.
    const polled = await request(t.app).get(res.headers.location!).set(user.auth).expect(200);
    expect(polled.body).toMatchObject({ id: done.id, status: 'succeeded', media_id: done.media_id });
  });

  it.each([
    ['wav', 'audio/wav', 'wav', 'pcm_s16le'],
    ['ogg', 'audio/ogg', 'ogg', 'vorbis'],
  ])('makes %s audio', async (format, mime, formatName, codec) => {
    const { site, user } = await world(100);
    worker = await startTestWorker(t);
    const res = await tts(site, user.auth, { text: 'Hello there, this is a test.', format, title: 'Greeting' }).expect(
      202,
    );
    const done = await waitForJob(t, res.body.id, ['succeeded', 'failed', 'canceled']);
    expect(done.status).toBe('succeeded');
    const { media, probed } = await storedAudio(done.media_id!);
    expect(probed.formatName).toContain(formatName);
    expect(probed.codec).toBe(codec);
    expect(media.mime_type).toBe(mime);
    expect(media.storage_key.endsWith(`.${format}`)).toBe(true);
    expect(probed.durationSeconds).toBeGreaterThan(0.5);
    expect(Math.abs(media.duration_seconds! - probed.durationSeconds)).toBeLessThanOrEqual(0.1);
    const title = await t.services.db.oneFirst(
      sql.type(z.object({ title: z.string() }))`select title from media_items where id = ${done.media_id}`,
    );
    expect(title).toBe('Greeting');
  });

  it('speaks slower at speed 0.5 than at speed 2, and reserves accordingly', async () => {
    const { site, user } = await world(100);
    worker = await startTestWorker(t);
    const slow = await tts(site, user.auth, { text: sentence, speed: 0.5 }).expect(202);
    const fast = await tts(site, user.auth, { text: sentence, speed: 2 }).expect(202);
    expect(slow.body.credits_reserved).toBe(estimateSeconds({ text: sentence, speed: 0.5 }));
    expect(fast.body.credits_reserved).toBe(estimateSeconds({ text: sentence, speed: 2 }));
    const slowDone = await waitForJob(t, slow.body.id, ['succeeded', 'failed', 'canceled']);
    const fastDone = await waitForJob(t, fast.body.id, ['succeeded', 'failed', 'canceled']);
    expect([slowDone.status, fastDone.status]).toEqual(['succeeded', 'succeeded']);
    const slowSeconds = (await storedAudio(slowDone.media_id!)).probed.durationSeconds;
    const fastSeconds = (await storedAudio(fastDone.media_id!)).probed.durationSeconds;
    expect(slowSeconds).toBeGreaterThan(fastSeconds * 1.5);
    for (const done of [slowDone, fastDone]) expect(done.credits_charged).toBeLessThanOrEqual(done.credits_reserved);
  });

  it('fails at once with speech_failed when espeak-ng has no voice for the language, releasing the credits', async () => {
    const { site, user } = await world(100);
    worker = await startTestWorker(t);
    const res = await tts(site, user.auth, { text: 'Hello', language: 'zz' }).expect(202);
    const done = await waitForJob(t, res.body.id, ['succeeded', 'failed', 'canceled']);
    expect(done).toMatchObject({
      status: 'failed',
      attempts: 1,
      credits_charged: 0,
      media_id: null,
      error: { code: 'speech_failed', transient: false },
    });
    expect((await ledgerFor(t, done.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
    expect(await userBalance(site, user.user.id)).toEqual({ balance: 100, reserved: 0, available: 100 });
  });

  it('answers 200 with the finished job under Prefer: wait', async () => {
    const { site, user } = await world(100);
    worker = await startTestWorker(t);
    const res = await tts(site, user.auth, { text: 'Wait for me.' }).set('Prefer', 'wait=30').expect(200);
    expect(res.body).toMatchObject({ kind: 'speech', status: 'succeeded' });
    expect(res.body.media_id).toEqual(expect.any(String));
    expect(res.headers.location).toBe(`/${site.slug}/jobs/${res.body.id}`);
    expect(res.headers['preference-applied']).toMatch(/^wait=\d+$/);
  });
});

describe('credits', () => {
  it('answers 402 with available and required when the estimate is not available, and leaves nothing behind', async () => {
    const { tenant, site, user } = await world(5);
    const res = await tts(site, user.auth, { text: sentence }).expect(402);
    expect(res.body).toMatchObject({ status: 402, available: 5, required: 6 });
    expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
    expect(await countJobs(site.id)).toBe(0);
    expect(await countQueued(tenant.id)).toBe(0);
    expect(await userBalance(site, user.user.id)).toEqual({ balance: 5, reserved: 0, available: 5 });
  });

  it('lets exactly as many of 20 concurrent submits through as the balance covers', async () => {
    // 24 characters: an estimate of 3 credits; 30 credits cover 10 of them.
    const text = 'Twenty requests in race.';
    expect(estimateSeconds({ text, speed: 1 })).toBe(3);
    const { tenant, site, user } = await world(30);
    const account = await userAccount(t.services.db, site, user.user.id);
    let racing = true;
    const samples: { balance: number; reserved: number }[] = [];
    const sampler = (async () => {
      while (racing) {
        samples.push(await readBalance(t.services.db, account));
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    })();
    const results = await Promise.all(Array.from({ length: 20 }, () => tts(site, user.auth, { text })));
    racing = false;
    await sampler;
    const statuses = results.map((res) => res.status).sort();
    expect(statuses.filter((status) => status === 202)).toHaveLength(10);
    expect(statuses.filter((status) => status === 402)).toHaveLength(10);
    for (const res of results.filter((r) => r.status === 402)) expect(res.body).toMatchObject({ required: 3 });
    for (const sample of samples) expect(sample.reserved).toBeLessThanOrEqual(sample.balance);
    expect(await readBalance(t.services.db, account)).toEqual({ balance: 30, reserved: 30, available: 0 });
    expect(await countJobs(site.id)).toBe(10);
    expect(await countQueued(tenant.id)).toBe(10);
  });
});

describe('Idempotency-Key', () => {
  it('replays the first answer for the same key and body, and refuses the key with another body', async () => {
    const { site, user } = await world(100);
    const send = (text: string) => tts(site, user.auth, { text }).set('Idempotency-Key', 'tts-1');
    const first = await send('Say this once.').expect(202);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const again = await send('Say this once.').expect(202);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body.id).toBe(first.body.id);
    expect(again.headers.location).toBe(first.headers.location);
    expect(await countJobs(site.id)).toBe(1);
    const reused = await send('Say something else.').expect(422);
    expect(reused.body.type).toBe('/problems/idempotency-key-reused');
    expect(await countJobs(site.id)).toBe(1);
    expect(await userBalance(site, user.user.id)).toMatchObject({ reserved: first.body.credits_reserved });
  });

  it('makes one job for concurrent requests with the same key', async () => {
    const { site, user } = await world(100);
    const answers = await Promise.all(
      Array.from({ length: 6 }, () => tts(site, user.auth, { text: 'Only once.' }).set('Idempotency-Key', 'tts-race')),
    );
    const statuses = answers.map((res) => res.status);
    // The first makes the job; a repeat answers its replay, or 409 while it is still being made.
    expect(statuses.every((status) => status === 202 || status === 409)).toBe(true);
    const ids = new Set(answers.filter((res) => res.status === 202).map((res) => res.body.id));
    expect(ids.size).toBe(1);
    for (const res of answers.filter((r) => r.status === 409)) expect(res.headers['retry-after']).toBe('1');
    expect(await countJobs(site.id)).toBe(1);
    expect(await userBalance(site, user.user.id)).toMatchObject({ reserved: 2 });
  });

  it('keeps nothing for a first attempt that failed, and scopes keys to the caller', async () => {
    const { tenant, site, user } = await world(2);
    const send = (auth: { Authorization: string }) =>
      tts(site, auth, { text: 'Pay me later.' }).set('Idempotency-Key', 'tts-402');
    await send(user.auth).expect(402);
    await giveCredits(t, site, 10, user.user.id);
    const paid = await send(user.auth).expect(202);
    expect(paid.headers['idempotent-replayed']).toBeUndefined();
    const colleague = await signedIn(t, { tenant, role: 'author', sites: [site] });
    await giveCredits(t, site, 10, colleague.user.id);
    const theirs = await send(colleague.auth).expect(202);
    expect(theirs.headers['idempotent-replayed']).toBeUndefined();
    expect(theirs.body.id).not.toBe(paid.body.id);
    expect(await countJobs(site.id)).toBe(2);
  });
});

describe('validation', () => {
  it.each<[string, Record<string, unknown>, string]>([
    ['empty text', { text: '' }, 'body.text'],
    ['blank text', { text: '   ' }, 'body.text'],
    ['no text', {}, 'body.text'],
    ['text over SPEECH_MAX_CHARACTERS', { text: 'x'.repeat(maxCharacters + 1) }, 'body.text'],
    ['format flac', { text: 'Hello', format: 'flac' }, 'body.format'],
    ['speed 3', { text: 'Hello', speed: 3 }, 'body.speed'],
    ['speed 0.25', { text: 'Hello', speed: 0.25 }, 'body.speed'],
    ['a voice with spaces', { text: 'Hello', voice: 'a b' }, 'body.voice'],
    ['a language that is no tag', { text: 'Hello', language: 'english!' }, 'body.language'],
  ])('refuses %s with 422 and creates no job', async (_name, body, field) => {
    const { site, user } = await world(100);
    const res = await tts(site, user.auth, body).expect(422);
    expect(res.body.errors).toEqual(expect.arrayContaining([expect.objectContaining({ path: field })]));
    expect(await countJobs(site.id)).toBe(0);
  });

  it.each([
    ['a NUL character', 'Hello\u0000world'],
    ['an unpaired surrogate', 'Hello \ud800 world'],
  ])('refuses text with %s, which PostgreSQL cannot store, with 422 rather than 500', async (_name, text) => {
    const { site, user } = await world(100);
    const res = await tts(site, user.auth, { text }).expect(422);
    expect(res.body.errors).toEqual([{ path: 'body.text', message: expect.stringMatching(/cannot be stored/) }]);
    expect(await countJobs(site.id)).toBe(0);
  });

  it('accepts text of exactly SPEECH_MAX_CHARACTERS', async () => {
    const { site, user } = await world(100);
    await tts(site, user.auth, { text: 'x'.repeat(maxCharacters) }).expect(202);
  });
});

describe('access', () => {
  it('answers 401 without a token', async () => {
    const { site } = await world(100);
    const res = await tts(site, {}, { text: 'Hello' }).expect(401);
    expect(res.body.status).toBe(401);
    expect(await countJobs(site.id)).toBe(0);
  });

  it('answers 404 for another tenant’s site', async () => {
    const { user } = await world(100);
    const other = await world(100);
    await tts(other.site, user.auth, { text: 'Hello' }).expect(404);
    expect(await countJobs(other.site.id)).toBe(0);
    // A member of the tenant who is not assigned to the site does not reach it either.
    const unassigned = await signedIn(t, { tenant: other.tenant, role: 'author' });
    await giveCredits(t, other.site, 100, unassigned.user.id);
    await tts(other.site, unassigned.auth, { text: 'Hello' }).expect(404);
    await request(t.app).post('/no-such-site/media/tts').set(user.auth).send({ text: 'Hello' }).expect(404);
    expect(await countJobs(other.site.id)).toBe(0);
  });

  it('answers 403 to a service account without media:write', async () => {
    const { tenant, site } = await world(0);
    await giveCredits(t, site, 100);
    const bot = await serviceAccount(t, tenant, ['sites:read', 'jobs:write']);
    await tts(site, bot.auth, { text: 'Hello' }).expect(403);
    const noJobs = await serviceAccount(t, tenant, ['sites:read', 'media:write']);
    await tts(site, noJobs.auth, { text: 'Hello' }).expect(403);
    expect(await countJobs(site.id)).toBe(0);
    expect(await poolBalance(tenant.id)).toEqual({ balance: 100, reserved: 0, available: 100 });
  });

  // BUG: api/media/router.ts calls requireScope(actor, 'media:write') before
  // submitJob's loadSite, so a service account without media:write gets 403 for
  // another tenant's site (or one that does not exist), where the access rules
  // (core/identity/access.ts: not reachable → 404, never 403; loadSite checks
  // reach before scopes) answer 404.
  it('answers 404, not 403, to a service account without media:write for another tenant’s site', async () => {
    const { tenant } = await world(0);
    const other = await world(100);
    const bot = await serviceAccount(t, tenant, ['sites:read', 'jobs:write']);
    await tts(other.site, bot.auth, { text: 'Hello' }).expect(404);
    await request(t.app).post('/no-such-site/media/tts').set(bot.auth).send({ text: 'Hello' }).expect(404);
  });

  it('answers 404 to a service account with media:write for another tenant’s site', async () => {
    const { tenant } = await world(0);
    const other = await world(100);
    const bot = await serviceAccount(t, tenant, ['sites:read', 'jobs:write', 'media:write']);
    await tts(other.site, bot.auth, { text: 'Hello' }).expect(404);
    expect(await countJobs(other.site.id)).toBe(0);
  });

  it('runs a service account’s job with media:write, paid from the tenant pool', async () => {
    const { tenant, site, user } = await world(50);
    await giveCredits(t, site, 100);
    const bot = await serviceAccount(t, tenant, ['sites:read', 'jobs:write', 'media:write']);
    worker = await startTestWorker(t);
    const res = await tts(site, bot.auth, { text: 'From a robot.' }).expect(202);
    expect(res.body).toMatchObject({ user_id: null, credits_reserved: 3 });
    const done = await waitForJob(t, res.body.id, ['succeeded', 'failed', 'canceled']);
    expect(done.status).toBe('succeeded');
    expect(done.credits_charged).toBeGreaterThan(0);
    expect(await poolBalance(tenant.id)).toEqual({
      balance: 100 - done.credits_charged,
      reserved: 0,
      available: 100 - done.credits_charged,
    });
    // No user's credits were touched.
    expect(await userBalance(site, user.user.id)).toEqual({ balance: 50, reserved: 0, available: 50 });
  });
});

describe('with OpenAI (SPEECH_PROVIDERS=openai, against its strict fake)', () => {
  let fake: FakeOpenAI;
  let openAi: TestApp;
  const env = () => ({
    SPEECH_PROVIDERS: 'openai',
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: fake.apiKey,
    // OpenAI bills speech by the characters: 100 credits per 1,000, so a character is a tenth of a credit.
    OPENAI_SPEECH_PRICES: 'gpt-4o-mini-tts=100',
  });
  const speech = () => fake.requests.filter((r) => r.path === '/v1/audio/speech');

  // The plan is made at submit: this app names OpenAI, as its worker does.
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    openAi = await startTestApp({ env: { SPEECH_MAX_CHARACTERS: String(maxCharacters), ...env() } });
  });
  beforeEach(() => {
    t = openAi;
  });
  afterEach(() => fake.reset());
  afterAll(async () => {
    t = local;
    await stopTestApp(openAi);
    await fake.close();
  });

  it('sends only what the model takes, with the key, encodes the WAV it answers and debits the characters spoken', async () => {
    worker = await startTestWorker(t, env());
    const { site, user } = await world(100);
    const res = await tts(site, user.auth, { text: sentence, voice: 'female', speed: 1.5 }).expect(202);
    // 59 characters at a tenth of a credit.
    const estimate = 6;
    expect(res.body).toMatchObject({
      credits_reserved: estimate,
      input: { providers: [{ vendor: 'openai', model: 'gpt-4o-mini-tts' }] },
    });
    const done = await waitForJob(t, res.body.id, ['succeeded', 'failed', 'canceled']);
    expect(done).toMatchObject({ status: 'succeeded', attempts: 1 });

    const calls = speech();
    expect(calls).toHaveLength(1);
    expect(calls[0]!.method).toBe('POST');
    expect(calls[0]!.headers.authorization).toBe(`Bearer ${fake.apiKey}`);
    expect(calls[0]!.body).toEqual({
      model: 'gpt-4o-mini-tts',
      input: sentence,
      voice: 'shimmer',
      speed: 1.5,
      response_format: 'wav',
      instructions: 'Speak in English.',
    });

    const { media, probed } = await storedAudio(done.media_id!);
    expect(probed.formatName).toBe('mp3');
    // OpenAI applied the speed: its half-second answer is stored as long as it came.
    expect(probed.durationSeconds).toBeGreaterThanOrEqual(0.45);
    expect(probed.durationSeconds).toBeLessThanOrEqual(0.7);
    expect(Math.abs(media.duration_seconds! - probed.durationSeconds)).toBeLessThanOrEqual(0.1);
    expect(done.output).toMatchObject({ provider: 'openai', model: 'gpt-4o-mini-tts', placeholder: false });
    const charged = estimate;
    expect(done.credits_charged).toBe(charged);
    expect(await userBalance(site, user.user.id)).toEqual({
      balance: 100 - charged,
      reserved: 0,
      available: 100 - charged,
    });
  });

  it('charges the characters spoken, however long the audio', async () => {
    worker = await startTestWorker(t, env());
    // Twenty seconds of WAV for a short text (11 characters: 2 credits).
    fake.script('audio/speech', { kind: 'raw', contentType: 'application/octet-stream', body: toneWav(20) });
    const { site, user } = await world(100);
    const res = await tts(site, user.auth, { text: 'Short text.' }).expect(202);
    expect(res.body.credits_reserved).toBe(2);
    const done = await waitForJob(t, res.body.id, ['succeeded', 'failed', 'canceled']);
    expect(done.status).toBe('succeeded');
    expect(done.output).toMatchObject({ duration_seconds: expect.any(Number) });
    expect((done.output as { duration_seconds: number }).duration_seconds).toBeGreaterThan(19);
    expect(done.credits_charged).toBe(2);
    expect(await ledgerFor(t, done.id)).toEqual([
      { kind: 'reservation', amount: 0, reserved_change: 2 },
      { kind: 'debit', amount: -2, reserved_change: -2 },
    ]);
    expect(await userBalance(site, user.user.id)).toEqual({ balance: 98, reserved: 0, available: 98 });
  });

  it('retries a transient 500 and succeeds on the second attempt', async () => {
    worker = await startTestWorker(t, env());
    fake.script('audio/speech', { kind: 'refuse', refusal: serverError() }, { kind: 'ok' });
    const { site, user } = await world(100);
    const res = await tts(site, user.auth, { text: 'Try again please.' }).expect(202);
    const done = await waitForJob(t, res.body.id, ['succeeded', 'failed', 'canceled'], 30_000);
    expect(done).toMatchObject({ status: 'succeeded', attempts: 2, error: null });
    expect(await attemptOutcomes(done.id)).toEqual(['retrying', 'succeeded']);
    expect(await attemptErrors(done.id)).toEqual(['provider_unavailable', null]);
    expect(speech()).toHaveLength(2);
    // Settled once: one debit however many attempts.
    expect((await ledgerFor(t, done.id)).filter((entry) => entry.kind === 'debit')).toHaveLength(1);
    expect(await userBalance(site, user.user.id)).toMatchObject({ balance: 100 - done.credits_charged, reserved: 0 });
  });

  it('retries a call that times out (AI_TIMEOUT_MS)', async () => {
    worker = await startTestWorker(t, { ...env(), AI_TIMEOUT_MS: '1000' });
    fake.script('audio/speech', { kind: 'hang' }, { kind: 'ok' });
    const { site, user } = await world(100);
    const res = await tts(site, user.auth, { text: 'Are you there?' }).expect(202);
    const done = await waitForJob(t, res.body.id, ['succeeded', 'failed', 'canceled'], 30_000);
    expect(done).toMatchObject({ status: 'succeeded', attempts: 2 });
    expect(await attemptOutcomes(done.id)).toEqual(['retrying', 'succeeded']);
    expect(await attemptErrors(done.id)).toEqual(['provider_timeout', null]);
  });

  it('fails what OpenAI refuses (a voice it lacks, 400) at once with provider_rejected and releases the credits', async () => {
    worker = await startTestWorker(t, env());
    const { site, user } = await world(100);
    const res = await tts(site, user.auth, { text: 'This will be refused.', voice: 'robot' }).expect(202);
    const done = await waitForJob(t, res.body.id, ['succeeded', 'failed', 'canceled']);
    expect(done).toMatchObject({
      status: 'failed',
      attempts: 1,
      credits_charged: 0,
      media_id: null,
      error: { code: 'provider_rejected', transient: false },
    });
    expect(await attemptOutcomes(done.id)).toEqual(['failed']);
    expect(speech()).toHaveLength(1);
    expect(speech()[0]!.body).toMatchObject({ voice: 'robot' });
    expect(await ledgerFor(t, done.id)).toEqual([
      { kind: 'reservation', amount: 0, reserved_change: res.body.credits_reserved },
      { kind: 'release', amount: 0, reserved_change: -res.body.credits_reserved },
    ]);
    expect(await userBalance(site, user.user.id)).toEqual({ balance: 100, reserved: 0, available: 100 });
  });
});
