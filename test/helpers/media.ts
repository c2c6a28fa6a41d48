// What the media test files share: their cast (test/helpers/identity.ts),
// an app with fake providers and a worker slot, and real media to work on.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import type { Config } from '../../core/config.ts';
import { binaries } from '../../worker/media/binaries.ts';
import { withTemporaryDir } from '../../worker/media/ffmpeg.ts';
import type { WorkerHandle } from '../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp } from './app.ts';
import { startFakeProviders, type FakeProviders } from './fake-providers.ts';
import { giveCredits, waitForJob } from './jobs.ts';
import { areaCast, type AreaCast } from './identity.ts';

export type MediaCast = AreaCast;

export const mediaCast = (t: TestApp): Promise<MediaCast> => areaCast(t, 'media');

/** What the media job test files share: fake providers, an app, the cast (A's editor holding 1,000 credits), and a worker slot emptied after each test. */
export type MediaSuite = { t: TestApp; cast: MediaCast; fake: FakeProviders; worker: WorkerHandle | undefined };

export function mediaSuite(env: (fake: FakeProviders) => Record<string, string> = () => ({})): MediaSuite {
  const suite = { worker: undefined } as MediaSuite;
  beforeAll(async () => {
    suite.fake = await startFakeProviders();
    suite.t = await startTestApp({ env: env(suite.fake) });
    suite.cast = await mediaCast(suite.t);
    await giveCredits(suite.t, suite.cast.a.site, 1000, suite.cast.a.editor.user.id);
  });
  afterEach(async () => {
    await suite.worker?.stop();
    suite.worker = undefined;
  });
  afterAll(async () => {
    await suite.worker?.stop();
    await stopTestApp(suite.t);
    await suite.fake.close();
  });
  return suite;
}

/** An H.264 MP4 of ffmpeg's test pattern: a real video that ffprobe reads. */
export async function testClip(config: Config, seconds: number, size = '320x240'): Promise<Buffer> {
  return withTemporaryDir(async (dir) => {
    const file = path.join(dir, 'clip.mp4');
    const args = [
      '-v',
      'error',
      '-y',
      '-f',
      'lavfi',
      '-i',
      `testsrc=duration=${seconds}:size=${size}:rate=10`,
      '-c:v',
      'libx264',
      '-pix_fmt',
      'yuv420p',
      file,
    ];
    await promisify(execFile)(binaries(config).ffmpeg, args);
    return readFile(file);
  });
}

/** Uploads a file as A's editor, waits for its processing job, and answers the job and the item as the editor reads them. */
export async function processedUpload(t: TestApp, cast: MediaCast, file: Buffer, name: string) {
  const { a } = cast;
  const upload = await request(t.app)
    .post(`/${a.site.slug}/media/`)
    .set(a.editor.auth)
    .attach('file', file, name)
    .expect(201);
  await waitForJob(t, upload.body.job_id, ['succeeded', 'failed']);
  const job = await request(t.app).get(`/${a.site.slug}/jobs/${upload.body.job_id}`).set(a.editor.auth).expect(200);
  const item = await request(t.app).get(`/${a.site.slug}/media/${upload.body.id}`).set(a.editor.auth).expect(200);
  return { job: job.body, item: item.body };
}
