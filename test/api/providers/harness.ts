// What the provider tests through the HTTP API share. The app listens on
// 127.0.0.1, since the vendors that call back (Replicate, fal) post their
// webhooks to PUBLIC_URL; a worker runs with the same provider configuration
// as the app (the app plans a job at submit, the worker calls the vendors);
// an author of a site submits the jobs and pays for them, and a global admin
// reads each job's provider calls. Jobs are followed through GET
// /{site}/jobs/{job_id}, as a client would.
import { execFile } from 'node:child_process';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import sharp from 'sharp';
import request from 'supertest';
import type { Config } from '../../../core/config.ts';
import { sql } from '../../../db/pool.ts';
import type { Job } from '../../../core/jobs/model.ts';
import type { Site } from '../../../core/tenancy/sites.ts';
import type { Tenant } from '../../../core/tenancy/tenants.ts';
import { binaries } from '../../../worker/media/binaries.ts';
import { withTemporaryDir } from '../../../worker/media/ffmpeg.ts';
import type { WorkerHandle } from '../../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { newSite, newTenant, signedIn, type Caller } from '../../helpers/factories.ts';
import { globalAdmin } from '../../helpers/identity.ts';
import { giveCredits, ledgerFor, startTestWorker } from '../../helpers/jobs.ts';
import { pollUntil } from '../../helpers/poll.ts';

export type ProviderCall = {
  capability: string;
  vendor: string;
  model: string;
  started_at: string;
  duration_ms: number;
  outcome: 'succeeded' | 'pending' | 'passed_on' | 'failed' | 'canceled';
  error_code: string | null;
  http_status: number | null;
};

export type ProviderSuite = {
  t: TestApp;
  /** The app's address, as PUBLIC_URL names it. */
  publicUrl: string;
  /** The configuration the app and the worker were started with. */
  env: Record<string, string>;
  tenant: Tenant;
  site: Site;
  author: Caller;
  admin: Caller;
  /** Runs `use` with a worker whose configuration adds `env` (a short AI_TIMEOUT_MS), then puts the usual one back. */
  withWorker<T>(env: Record<string, string>, use: () => Promise<T>): Promise<T>;
};

export function providerSuite(env: () => Record<string, string>): ProviderSuite {
  const suite = {} as ProviderSuite;
  let server: http.Server;
  let worker: WorkerHandle | undefined;
  beforeAll(async () => {
    // Listening before the app exists, so that its address can be the app's PUBLIC_URL.
    let app: http.RequestListener = (_req, res) => void res.writeHead(503).end();
    server = http.createServer((req, res) => app(req, res));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    suite.publicUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    suite.env = { ...env(), PUBLIC_URL: suite.publicUrl };
    suite.t = await startTestApp({ env: suite.env });
    app = suite.t.app;
    worker = await startTestWorker(suite.t, suite.env);
    suite.tenant = await newTenant(suite.t);
    suite.site = await newSite(suite.t, suite.tenant);
    suite.author = await signedIn(suite.t, { tenant: suite.tenant, role: 'author', sites: [suite.site] });
    suite.admin = await globalAdmin(suite.t);
    await giveCredits(suite.t, suite.site, 100_000, suite.author.user.id);
  });
  // A vendor's 429 holds it off for every job (core/providers/limits.ts); a test's scripted one ends with the test.
  afterEach(async () => {
    await suite.t.services.db.query(sql.typeAlias('void')`delete from provider_blocks`);
  });
  suite.withWorker = async (extra, use) => {
    await worker?.stop();
    worker = await startTestWorker(suite.t, { ...suite.env, ...extra });
    try {
      return await use();
    } finally {
      await worker.stop();
      worker = await startTestWorker(suite.t, suite.env);
    }
  };
  afterAll(async () => {
    await worker?.stop();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
    await stopTestApp(suite.t);
  });
  return suite;
}

/** Submits a job as the author: 202, and its id. */
export async function submit(suite: ProviderSuite, path: string, body: Record<string, unknown>): Promise<string> {
  const res = await request(suite.t.app).post(`/${suite.site.slug}${path}`).set(suite.author.auth).send(body);
  if (res.status !== 202) throw new Error(`${path}: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.id as string;
}

export const readJob = async (suite: ProviderSuite, id: string): Promise<Job> =>
  (await request(suite.t.app).get(`/${suite.site.slug}/jobs/${id}`).set(suite.author.auth).expect(200)).body as Job;

/** The job once it is in one of `statuses` (by default, once it ended), read as its author reads it. */
export async function jobWhen(
  suite: ProviderSuite,
  id: string,
  statuses: Job['status'][] = ['succeeded', 'failed', 'canceled'],
): Promise<Job> {
  const job = await pollUntil(
    () => readJob(suite, id),
    (read) => statuses.includes(read.status),
    { tries: 600, everyMs: 100 },
  );
  if (!statuses.includes(job.status))
    throw new Error(`job ${id} is ${job.status}, not ${statuses.join(' or ')}: ${JSON.stringify(job.error)}`);
  return job;
}

/** The job's calls to providers, in order, as GET /admin/jobs/{job_id} shows them. */
export async function providerCalls(suite: ProviderSuite, id: string): Promise<ProviderCall[]> {
  const res = await request(suite.t.app).get(`/admin/jobs/${id}`).set(suite.admin.auth).expect(200);
  return res.body.provider_calls as ProviderCall[];
}

/** Reads the job's provider calls until `done` holds of them (a call is recorded as it ends). */
export const providerCallsWhen = (suite: ProviderSuite, id: string, done: (calls: ProviderCall[]) => boolean) =>
  pollUntil(() => providerCalls(suite, id), done, { tries: 300, everyMs: 100 });

/** The kinds of the job's ledger entries, in order: a refused or canceled job's are a reservation and its release. */
/**
 * That the job succeeded on the local stand-in after `vendor` passed it on
 * with `code` (and, when given, that HTTP status): its two provider calls.
 */
export async function expectPassedOnToLocal(
  suite: ProviderSuite,
  id: string,
  vendor: string,
  failure: { code: string; status?: number | null },
): Promise<void> {
  const done = await jobWhen(suite, id);
  expect(done).toMatchObject({ status: 'succeeded', attempts: 1, output: { provider: 'local', placeholder: true } });
  expect(await providerCalls(suite, done.id)).toMatchObject([
    {
      vendor,
      outcome: 'passed_on',
      error_code: failure.code,
      ...(failure.status === undefined ? {} : { http_status: failure.status }),
    },
    { vendor: 'local', outcome: 'succeeded' },
  ]);
}

export const ledgerKinds = async (suite: ProviderSuite, id: string) =>
  (await ledgerFor(suite.t, id)).map((entry) => entry.kind);

/** What a job of `kind` costs a unit on the suite's site, as GET /{site}/transactions/cost-settings says. */
export async function unitPrice(suite: ProviderSuite, kind: string): Promise<number> {
  const res = await request(suite.t.app)
    .get(`/${suite.site.slug}/transactions/cost-settings`)
    .set(suite.author.auth)
    .expect(200);
  const price = (res.body.items as { kind: string; price: number }[]).find((item) => item.kind === kind);
  if (!price) throw new Error(`no price for ${kind}`);
  return price.price;
}

/**
 * A job a vendor refused: failed on its first attempt with a plain sentence
 * of ours (none of the vendor's own words), nothing charged, its
 * reservation released.
 */
export async function expectRefused(suite: ProviderSuite, job: Job, message: RegExp, vendorWords: string) {
  expect(job).toMatchObject({
    status: 'failed',
    attempts: 1,
    credits_charged: 0,
    error: { code: 'provider_rejected', message: expect.stringMatching(message) },
  });
  expect(job.error!.message).not.toContain(vendorWords);
  expect(await ledgerKinds(suite, job.id)).toEqual(['reservation', 'release']);
}

/** Real media for the fakes that serve files, since the platform decodes what it fetches. */
export type Media = { png: Buffer; jpeg: Buffer; webp: Buffer; mp4: Buffer; mp3: Buffer };

export async function realMedia(config: Config): Promise<Media> {
  const picture = sharp({ create: { width: 64, height: 64, channels: 3, background: '#3366cc' } });
  // ffmpeg's own test sources: a 2-second H.264 clip of its pattern, a second of a 440 Hz tone.
  const made = (source: string, codec: string[], name: string) =>
    withTemporaryDir(async (dir) => {
      const file = path.join(dir, name);
      await promisify(execFile)(binaries(config).ffmpeg, [
        '-v',
        'error',
        '-y',
        '-f',
        'lavfi',
        '-i',
        source,
        ...codec,
        file,
      ]);
      return readFile(file);
    });
  return {
    png: await picture.clone().png().toBuffer(),
    jpeg: await picture.clone().jpeg().toBuffer(),
    webp: await picture.clone().webp().toBuffer(),
    mp4: await made('testsrc=duration=2:size=320x240:rate=10', ['-c:v', 'libx264', '-pix_fmt', 'yuv420p'], 'clip.mp4'),
    mp3: await made('sine=frequency=440:duration=1', ['-c:a', 'libmp3lame'], 'tone.mp3'),
  };
}

/** The file a fake serves for an output named `name`, by its extension. */
export const mediaByName = (media: Media) => (name: string) => {
  const extension = name.split('.').pop();
  return extension === 'jpg' ? media.jpeg : media[extension as keyof Media];
};
