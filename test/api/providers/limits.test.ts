// Limits per provider, shared by every worker (core/providers/limits.ts): a
// job whose provider has no free slot is not sent over the limit but waits in
// the queue, its stage saying whom it waits for, without spending an attempt;
// a vendor's own 429 holds every job off for the wait it named.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { newSite, newTenant, signedIn, type Caller } from '../../helpers/factories.ts';
import { rateLimited, startFakeOpenAI, type FakeOpenAI } from '../../helpers/fakes/openai.ts';
import { giveCredits, readJob, startTestWorker, waitForJob } from '../../helpers/jobs.ts';
import { pollUntil } from '../../helpers/poll.ts';
import type { WorkerHandle } from '../../../worker/runner.ts';
import type { Site } from '../../../core/tenancy/sites.ts';

let fake: FakeOpenAI;
beforeAll(async () => {
  fake = await startFakeOpenAI();
});
afterAll(() => fake.close());

type World = { t: TestApp; worker: WorkerHandle; site: Site; author: Caller };

async function world(env: Record<string, string>): Promise<World> {
  const providers = { IMAGE_PROVIDERS: 'openai', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: fake.apiKey, ...env };
  const t = await startTestApp({ env: providers });
  const worker = await startTestWorker(t, providers);
  const tenant = await newTenant(t);
  const site = await newSite(t, tenant);
  const author = await signedIn(t, { tenant, role: 'author', sites: [site] });
  await giveCredits(t, site, 10_000, author.user.id);
  return { t, worker, site, author };
}
const end = async (w: World) => {
  await w.worker.stop();
  await stopTestApp(w.t);
};
const generate = (w: World, prompt: string) =>
  request(w.t.app)
    .post(`/${w.site.slug}/media/generate`)
    .set(w.author.auth)
    .send({ prompt })
    .expect(202)
    .then((res) => res.body.id as string);
const imageCalls = () => fake.requests.filter((call) => call.path === '/v1/images/generations').length;

it('sends a vendor no more than its requests a minute: the next job waits, its stage saying why', async () => {
  fake.reset();
  const w = await world({ OPENAI_REQUESTS_PER_MINUTE: '2' });
  try {
    for (const prompt of ['one', 'two'])
      expect(await waitForJob(w.t, await generate(w, prompt), ['succeeded', 'failed'])).toMatchObject({
        status: 'succeeded',
      });
    const third = await generate(w, 'three');
    const waiting = await pollUntil(
      () => readJob(w.t, third),
      (job) => job.stage?.includes('limit of 2 requests a minute') === true,
      { tries: 300, everyMs: 50 },
    );
    expect(waiting).toMatchObject({ status: 'queued', attempts: 0 });
    expect(imageCalls()).toBe(2);
    const deferred = await w.t.services.db.anyFirst(sql.type(z.object({ outcome: z.string() }))`
      select outcome from job_attempts where job_id = ${third}`);
    expect(deferred.length).toBeGreaterThan(0);
    expect(new Set(deferred)).toEqual(new Set(['deferred']));
    await request(w.t.app).post(`/${w.site.slug}/jobs/${third}/cancel`).set(w.author.auth).expect(200);
  } finally {
    await end(w);
  }
});

it('holds every job off for the wait a vendor’s 429 named, sending it nothing meanwhile', async () => {
  fake.reset();
  const w = await world({});
  try {
    fake.script('images/generations', { kind: 'refuse', refusal: rateLimited(60) });
    const first = await generate(w, 'first');
    await pollUntil(
      () => readJob(w.t, first),
      (job) => job.status === 'queued' && job.error?.code === 'provider_unavailable',
      { tries: 300, everyMs: 50 },
    );
    const second = await generate(w, 'second');
    const waiting = await pollUntil(
      () => readJob(w.t, second),
      (job) => job.stage?.includes('openai asked to wait') === true,
      { tries: 300, everyMs: 50 },
    );
    expect(waiting).toMatchObject({ status: 'queued', attempts: 0 });
    expect(imageCalls()).toBe(1);
    for (const id of [first, second])
      await request(w.t.app).post(`/${w.site.slug}/jobs/${id}/cancel`).set(w.author.auth).expect(200);
  } finally {
    await end(w);
  }
});
