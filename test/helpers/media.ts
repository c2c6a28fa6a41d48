// What the media test files share: their cast (test/helpers/identity.ts), an
// app (listening on 127.0.0.1 when a vendor calls back) and a worker slot, and
// real media to work on. The vendors are the strict fakes of
// test/helpers/fakes/, which each test file starts and names in `env`.
import { execFile } from 'node:child_process';
import { readFile } from 'node:fs/promises';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { promisify } from 'node:util';
import request from 'supertest';
import type { Config } from '../../core/config.ts';
import { binaries } from '../../worker/media/binaries.ts';
import { encodeAudio, withTemporaryDir } from '../../worker/media/ffmpeg.ts';
import type { WorkerHandle } from '../../worker/runner.ts';
import { startTestApp, stopTestApp, type TestApp } from './app.ts';
import { giveCredits, waitForJob } from './jobs.ts';
import { areaCast, type AreaCast } from './identity.ts';
import { toneWav } from './tone.ts';

export { toneWav };

export type MediaCast = AreaCast;

export const mediaCast = (t: TestApp): Promise<MediaCast> => areaCast(t, 'media');

/** An app reachable over HTTP at `publicUrl` (its PUBLIC_URL), where Replicate's and fal's fakes post their webhooks. */
export type ListeningApp = { t: TestApp; publicUrl: string; close(): Promise<void> };

/**
 * Starts the test app with `env` plus PUBLIC_URL naming its own address: the
 * server listens first (answering 503 until the app exists), so the address
 * is known when the app's configuration is read.
 */
export async function startListeningApp(env: Record<string, string> = {}): Promise<ListeningApp> {
  let app: http.RequestListener = (_req, res) => void res.writeHead(503).end();
  const server = http.createServer((req, res) => app(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const publicUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const t = await startTestApp({ env: { ...env, PUBLIC_URL: publicUrl } });
  app = t.app;
  return {
    t,
    publicUrl,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await stopTestApp(t);
    },
  };
}

/**
 * What the media job test files share: an app, the cast (A's editor holding
 * 1,000 credits), the configuration the app was started with (`env`, which a
 * worker of the same providers is started with), and a worker slot emptied
 * after each test.
 */
export type MediaSuite = {
  t: TestApp;
  cast: MediaCast;
  env: Record<string, string>;
  worker: WorkerHandle | undefined;
};

/**
 * `env` is read in beforeAll, after the file's own beforeAll hooks registered
 * before this call (where it starts its fakes). `listen`: the app listens on
 * 127.0.0.1 and PUBLIC_URL names it, for the vendors that call back.
 */
export function mediaSuite(options: { env?: () => Record<string, string>; listen?: boolean } = {}): MediaSuite {
  const suite = { worker: undefined } as MediaSuite;
  let listening: ListeningApp | undefined;
  beforeAll(async () => {
    const env = options.env?.() ?? {};
    if (options.listen) {
      listening = await startListeningApp(env);
      suite.t = listening.t;
      suite.env = { ...env, PUBLIC_URL: listening.publicUrl };
    } else {
      suite.t = await startTestApp({ env });
      suite.env = env;
    }
    suite.cast = await mediaCast(suite.t);
    await giveCredits(suite.t, suite.cast.a.site, 1000, suite.cast.a.editor.user.id);
  });
  afterEach(async () => {
    await suite.worker?.stop();
    suite.worker = undefined;
  });
  afterAll(async () => {
    await suite.worker?.stop();
    if (listening) await listening.close();
    else await stopTestApp(suite.t);
  });
  return suite;
}

/** The same tone as an MP3, as a speech model on Replicate delivers it. */
export const toneMp3 = (config: Config, seconds: number): Promise<Buffer> =>
  encodeAudio(config, toneWav(seconds), 'mp3', new AbortController().signal);

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
