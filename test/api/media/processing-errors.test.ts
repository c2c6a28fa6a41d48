// What a tenant is told when an upload cannot be processed: a stable code and
// a plain sentence, on the job and on the media item — not ffprobe's version
// banner and build, nor sharp's or libvips's own words. Those go to the
// worker's log, in full, beside the job's id.
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { pino } from 'pino';
import sharp from 'sharp';
import { probeBuffer, withTemporaryDir } from '../../../worker/media/ffmpeg.ts';
import { startWorker, type WorkerHandle } from '../../../worker/runner.ts';
import { startTestApp, stopTestApp, testConfig, type TestApp } from '../../helpers/app.ts';
import { mediaCast, processedUpload, testClip, type MediaCast } from '../../helpers/media.ts';

let t: TestApp;
let cast: MediaCast;
let worker: WorkerHandle;
const logLines: string[] = [];

beforeAll(async () => {
  t = await startTestApp();
  cast = await mediaCast(t);
  const config = testConfig({
    DATABASE_URL: t.database.url,
    DATA_DIR: t.config.dataDir,
    WORKER_POLL_INTERVAL_MS: '100',
  });
  worker = await startWorker({
    databaseUrl: t.database.url,
    config,
    db: t.services.db,
    logger: pino({ level: 'warn' }, { write: (line: string) => logLines.push(line) }),
    crontab: '',
  });
});
afterAll(async () => {
  await worker.stop();
  await stopTestApp(t);
});

/** The worker's log lines about one job. */
const loggedFor = (jobId: string) => logLines.filter((line) => line.includes(jobId)).join('\n');

it('tells the tenant a video could not be read, and logs what ffprobe said', async () => {
  // The start of a real MP4 whose index (at its end) is cut off: the type sniff passes, ffprobe fails.
  const cut = (await testClip(t.config, 1)).subarray(0, 2000);
  const said = await probeBuffer(t.config, cut).then(
    () => '',
    (error: Error) => error.message,
  );
  expect(said).toMatch(/ffprobe version/);
  const { job, item } = await processedUpload(t, cast, cut, 'cut.mp4');
  const told = { code: 'unreadable_file', message: 'The file could not be read as a video.' };
  expect(job).toMatchObject({ status: 'failed', error: told });
  expect(item).toMatchObject({ status: 'failed', kind: 'video', processing_error: told.message });
  expect(JSON.stringify([job, item])).not.toMatch(/ffprobe|copyright|configuration|libav|moov/i);
  // The log has ffprobe's own account, banner and all.
  const logged = loggedFor(job.id);
  expect(logged).toMatch(/ffprobe version/);
  expect(logged).toContain(JSON.stringify(said.split('\n').at(-1)!.trim()).slice(1, -1));
});

it('tells the tenant an image could not be read, and logs what sharp said', async () => {
  // A JPEG signature on bytes that are no image: the type passes the sniff, the decode fails.
  const broken = Buffer.concat([Buffer.from([0xff, 0xd8, 0xff, 0xe0]), Buffer.alloc(2000, 7)]);
  // sharp's words for it, reading from a file as the worker does.
  const said = await withTemporaryDir(async (dir) => {
    const file = path.join(dir, 'broken.jpg');
    await writeFile(file, broken);
    return sharp(file, { failOn: 'error' })
      .metadata()
      .then(
        () => '',
        (error: Error) => error.message,
      );
  });
  expect(said).not.toBe('');
  const { job, item } = await processedUpload(t, cast, broken, 'broken.jpg');
  const told = { code: 'unreadable_file', message: 'The file could not be read as an image.' };
  expect(job).toMatchObject({ status: 'failed', error: told });
  expect(item).toMatchObject({ status: 'failed', kind: 'image', processing_error: told.message });
  expect(JSON.stringify([job, item])).not.toContain(said);
  expect(loggedFor(job.id)).toContain(JSON.stringify(said).slice(1, -1));
});
