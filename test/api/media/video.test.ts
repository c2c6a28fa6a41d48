// POST /{site}/media/generatevideo and its two variants: a video from a prompt
// or a script, as a job paid per second, each endpoint by its own chain of
// providers. Here generatevideo composes it locally (scene pictures, espeak
// narration, ffmpeg); variant A asks Replicate's video model (seedance) and
// variant B fal's (Kling), each through its strict fake, and finishes on the
// vendor's signed webhook to the app listening on 127.0.0.1.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { estimateVideoSeconds, videoRequest } from '../../../core/media/video.ts';
import { probeBuffer, type Probe } from '../../../worker/media/ffmpeg.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { startFakeFal, type FakeFal } from '../../helpers/fakes/fal.ts';
import { startFakeReplicate, type FakeReplicate } from '../../helpers/fakes/replicate.ts';
import { ledgerFor, startTestWorker, waitForJob } from '../../helpers/jobs.ts';
import { mediaCast, mediaSuite, testClip, type MediaCast } from '../../helpers/media.ts';

const seedance = 'bytedance/seedance-1-pro-fast';
const kling = 'fal-ai/kling-video/v2.5-turbo/pro/text-to-video';

let t: TestApp;
let cast: MediaCast;
let replicate: FakeReplicate;
let fal: FakeFal;
beforeAll(async () => {
  replicate = await startFakeReplicate();
  fal = await startFakeFal({ retries: 1, retryDelayMs: 20 });
});
const suite = mediaSuite({
  listen: true,
  env: () => ({
    VIDEO_VARIANT_A_PROVIDERS: 'replicate',
    VIDEO_VARIANT_B_PROVIDERS: 'fal',
    REPLICATE_API_TOKEN: replicate.token,
    REPLICATE_BASE_URL: replicate.url,
    FAL_KEY: fal.key,
    FAL_QUEUE_URL: fal.url,
    FAL_JWKS_URL: fal.jwksUrl,
    // Each video model at 5 credits a second, as the stand-in is priced in the tests.
    REPLICATE_VIDEO_PRICES: 'bytedance/seedance-1-pro-fast=5',
    FAL_VIDEO_PRICES: `${kling}=5`,
  }),
});
beforeAll(async () => {
  ({ t, cast } = suite);
  // What the video models' files hold: real clips, which the platform probes.
  const [three, four] = await Promise.all([testClip(t.config, 3), testClip(t.config, 4, '640x360')]);
  replicate.media = (name) => (name.endsWith('.mp4') ? three : undefined);
  fal.media = (name) => (name.endsWith('.mp4') ? four : undefined);
  // Every stage a job passes through, for "progress is reported per scene".
  await t.services.db.query(
    sql.typeAlias('void')`create table stage_log (job_id uuid, stage text, at timestamptz default clock_timestamp())`,
  );
  await t.services.db.query(sql.typeAlias('void')`
    create function log_stage() returns trigger language plpgsql as $$
    begin insert into stage_log (job_id, stage) values (new.id, new.stage); return new; end $$`);
  await t.services.db.query(
    sql.typeAlias(
      'void',
    )`create trigger jobs_stage_log after update of stage on jobs for each row execute function log_stage()`,
  );
});
afterEach(() => {
  replicate.mischief = {};
  replicate.retryDelaysMs = [100, 200, 400];
});
afterAll(async () => {
  await replicate.close();
  await fal.close();
});

const site = () => cast.a.site.slug;
const submit = (variant: '' | '-varianta' | '-variantb', body: Record<string, unknown>, auth = cast.a.editor.auth) =>
  request(t.app).post(`/${site()}/media/generatevideo${variant}`).set(auth).send(body);

/** Downloads the item's file and probes it with ffprobe. */
async function probed(mediaId: string): Promise<Probe> {
  const file = await request(t.app)
    .get(`/${site()}/media/${mediaId}/view`)
    .set(cast.a.editor.auth)
    .buffer(true)
    .expect(200);
  return probeBuffer(t.config, file.body as Buffer);
}

const stages = (jobId: string) =>
  t.services.db.anyFirst(
    sql.type(z.object({ stage: z.string() }))`select stage from stage_log where job_id = ${jobId} order by at`,
  );
const item = async (id: string) =>
  (await request(t.app).get(`/${site()}/media/${id}`).set(cast.a.editor.auth).expect(200)).body;
const readJobAs = async (id: string) =>
  (await request(t.app).get(`/${site()}/jobs/${id}`).set(cast.a.editor.auth).expect(200)).body;

describe('generatevideo (composed here)', () => {
  it('makes an H.264 MP4 of the scenes asked for, with a poster, and charges its seconds', async () => {
    suite.worker = await startTestWorker(t, suite.env);
    const picture = await request(t.app)
      .post(`/${site()}/media/generate`)
      .set(cast.a.editor.auth)
      .set('Prefer', 'wait=60')
      .send({ prompt: 'A red barn', size: '256x256' })
      .expect(200);
    const folder = await request(t.app)
      .post(`/${site()}/media/folders/`)
      .set(cast.a.editor.auth)
      .send({ name: 'Videos' })
      .expect(201);
    const body = {
      scenes: [
        { image_prompt: 'Fields at dawn', duration_seconds: 1.5 },
        { media_id: picture.body.media_ids[0], duration_seconds: 2 },
      ],
      size: '640x360',
      folder_id: folder.body.id,
      title: 'Farm',
    };
    const res = await submit('', body).set('Prefer', 'wait=120').expect(200);
    expect(res.body).toMatchObject({
      kind: 'video',
      status: 'succeeded',
      credits_reserved: 5 * 4,
      input: { providers: [{ vendor: 'local', model: 'local' }] },
      output: { provider: 'local', model: 'local', placeholder: true, scenes: 2, codec: 'h264' },
    });
    const video = await item(res.body.media_id);
    expect(video).toMatchObject({
      kind: 'video',
      mime_type: 'video/mp4',
      width: 640,
      height: 360,
      status: 'ready',
      folder_id: folder.body.id,
      title: 'Farm',
      job_id: res.body.id,
    });
    expect(video.variants).toEqual([
      { name: 'poster', mime_type: 'image/jpeg', width: 640, height: 360, size_bytes: expect.any(Number) },
    ]);
    const found = await probed(res.body.media_id);
    expect(found).toMatchObject({ codec: 'h264', width: 640, height: 360 });
    // 1.5 s and 2 s of scenes.
    expect(found.durationSeconds).toBeGreaterThan(3.4);
    expect(found.durationSeconds).toBeLessThan(3.7);
    expect(res.body.credits_charged).toBe(Math.ceil(5 * video.duration_seconds - 1e-9));
    expect((await ledgerFor(t, res.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'debit', 'release']);
    const seen = await stages(res.body.id);
    expect(seen).toEqual(expect.arrayContaining(['scene 1 of 2', 'scene 2 of 2', 'joining the scenes']));
    expect(seen.indexOf('scene 1 of 2')).toBeLessThan(seen.indexOf('scene 2 of 2'));
    const poster = await request(t.app)
      .get(`/${site()}/media/${res.body.media_id}/view?variant=poster`)
      .set(cast.a.editor.auth)
      .expect(200);
    expect(poster.headers['content-type']).toBe('image/jpeg');
  });

  it('narrates a prompt sentence by sentence: each scene lasts as long as its narration needs', async () => {
    suite.worker = await startTestWorker(t, suite.env);
    const body = { prompt: 'The sun rises. Birds sing.', size: '640x360', seconds_per_scene: 1 };
    const res = await submit('', body).set('Prefer', 'wait=120').expect(200);
    expect(res.body).toMatchObject({
      status: 'succeeded',
      output: { scenes: 2 },
      credits_reserved: 5 * estimateVideoSeconds(videoRequest.parse(body), [{ vendor: 'local', model: 'local' }]),
    });
    const found = await probed(res.body.media_id);
    expect(found.codec).toBe('h264');
    expect(found.hasAudio).toBe(true);
    // Two spoken sentences, each followed by half a second: longer than the 1 s per scene asked for.
    expect(found.durationSeconds).toBeGreaterThan(2.5);
    expect(res.body.credits_charged).toBeLessThanOrEqual(res.body.credits_reserved);
  });
});

describe('generatevideo-varianta (Replicate’s video model, by webhook)', () => {
  it('asks seedance for a clip, waits, and finishes with the delivered video; a bad signature is refused, a duplicate ignored', async () => {
    suite.worker = await startTestWorker(t, suite.env);
    const res = await submit('-varianta', { prompt: 'A storm over the sea.', size: '1248x704' }).expect(202);
    // The narration needs about 3.5 s: the shortest clip seedance makes that holds it is reserved.
    expect(res.body).toMatchObject({
      credits_reserved: 5 * 4,
      input: { providers: [{ vendor: 'replicate', model: seedance }] },
    });
    const waiting = await waitForJob(t, res.body.id, ['waiting', 'failed', 'succeeded']);
    expect(waiting).toMatchObject({ status: 'waiting', provider: 'replicate' });
    const ref = waiting.provider_ref!;
    const prediction = replicate.predictions.get(ref)!;
    expect(prediction).toMatchObject({
      model: seedance,
      input: { prompt: 'A storm over the sea.', duration: 4, aspect_ratio: '16:9', resolution: '720p' },
      webhook: `${suite.env.PUBLIC_URL}/${cast.a.site.id}/media/webhook/mediaprovider?provider=replicate&job=${res.body.id}`,
    });
    // Signed with another secret: refused, and the job still waits.
    replicate.mischief = { signature: 'wrong' };
    replicate.retryDelaysMs = [];
    await replicate.complete(ref, { status: 'succeeded' });
    expect(replicate.deliveries.filter((d) => d.prediction === ref).map((d) => d.answered)).toEqual([401]);
    expect((await readJobAs(res.body.id)).status).toBe('waiting');
    // Delivered again, and twice: accepted once, the copy answered 200 and ignored.
    replicate.mischief = { duplicate: true };
    await replicate.redeliver(ref);
    expect(replicate.deliveries.filter((d) => d.prediction === ref).map((d) => d.answered)).toEqual([401, 200, 200]);
    const done = await waitForJob(t, res.body.id, ['succeeded', 'failed']);
    expect(done).toMatchObject({
      status: 'succeeded',
      provider: 'replicate',
      output: { provider: 'replicate', model: seedance, placeholder: false },
    });
    const video = await item(done.media_id!);
    expect(video).toMatchObject({
      kind: 'video',
      width: 320,
      height: 240,
      variants: [expect.objectContaining({ name: 'poster' })],
    });
    expect(video.duration_seconds).toBeCloseTo(3, 0);
    expect(done.credits_charged).toBe(15);
    expect((await ledgerFor(t, res.body.id)).filter((entry) => entry.kind === 'debit')).toHaveLength(1);
  });

  it('fails, charging nothing, when the delivered file is not a video', async () => {
    suite.worker = await startTestWorker(t, suite.env);
    const res = await submit('-varianta', { prompt: 'Nothing to see.' }).expect(202);
    const waiting = await waitForJob(t, res.body.id, ['waiting', 'failed', 'succeeded']);
    const clip = replicate.media;
    // The fake's own file: a line of text.
    replicate.media = undefined;
    try {
      await replicate.complete(waiting.provider_ref!, { status: 'succeeded' });
    } finally {
      replicate.media = clip;
    }
    const done = await waitForJob(t, res.body.id, ['succeeded', 'failed']);
    expect(done).toMatchObject({ status: 'failed', credits_charged: 0, error: { code: 'provider_invalid_response' } });
    expect((await ledgerFor(t, res.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
  });
});

describe('generatevideo-variantb (fal’s video model, by webhook)', () => {
  it('queues the clip at fal in a frame Kling makes, and finishes with the delivered video, debiting its seconds', async () => {
    suite.worker = await startTestWorker(t, suite.env);
    const res = await submit('-variantb', { prompt: 'A city at night, seen from above.' }).expect(202);
    // The narration needs about 4.5 s: Kling's 5 s clip is reserved; the 4 s delivered are debited.
    expect(res.body).toMatchObject({ credits_reserved: 25, input: { providers: [{ vendor: 'fal', model: kling }] } });
    const waiting = await waitForJob(t, res.body.id, ['waiting', 'failed', 'succeeded']);
    expect(waiting).toMatchObject({ status: 'waiting', provider: 'fal' });
    const queued = fal.queued.get(waiting.provider_ref!)!;
    expect(queued).toMatchObject({
      model: kling,
      input: { prompt: 'A city at night, seen from above.', duration: '5', aspect_ratio: '16:9' },
      ignored: [],
    });
    const rendering = await request(t.app).get(`/${site()}/jobs/${res.body.id}`).set(cast.a.editor.auth).expect(200);
    expect(rendering.body).toMatchObject({ status: 'waiting', stage: 'waiting for the provider' });
    expect((await fal.complete(waiting.provider_ref!)).map((sent) => sent.status)).toEqual([200]);
    const done = await waitForJob(t, res.body.id, ['succeeded', 'failed']);
    expect(done).toMatchObject({
      status: 'succeeded',
      credits_reserved: 25,
      credits_charged: 20,
      output: { provider: 'fal', model: kling, placeholder: false, codec: 'h264', width: 640, height: 360 },
    });
    expect(fal.requests.some((r) => r.path === `/files/${waiting.provider_ref}.mp4`)).toBe(true);
  });

  it('fails at once, charging nothing, when fal fails the clip', async () => {
    suite.worker = await startTestWorker(t, suite.env);
    const res = await submit('-variantb', { prompt: 'Something refused.' }).expect(202);
    const waiting = await waitForJob(t, res.body.id, ['waiting', 'failed', 'succeeded']);
    await fal.complete(waiting.provider_ref!, {
      fail: {
        status: 422,
        body: { detail: [{ loc: ['body', 'prompt'], msg: 'content policy', type: 'value_error' }] },
      },
    });
    const done = await readJobAs(res.body.id);
    // The tenant reads a plain sentence; fal's own words are for the log.
    expect(done).toMatchObject({
      status: 'failed',
      credits_charged: 0,
      error: { code: 'provider_failed', message: 'fal could not make the result.' },
    });
    expect((await ledgerFor(t, res.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
  });
});

describe('refusals before anything is queued', () => {
  const videoJobs = () =>
    t.services.db.oneFirst(
      sql.type(z.object({ count: z.number() }))`select count(*)::int as count from jobs where kind = 'video'`,
    );

  it('checks the body, the folder, the scene images, the narration length and the credits', async () => {
    const before = await videoJobs();
    await submit('', {}).expect(422);
    await submit('', { prompt: 'x', scenes: [{ narration: 'y' }] }).expect(422);
    await submit('', { scenes: [] }).expect(422);
    await submit('', { scenes: [{}] }).expect(422);
    await submit('', { scenes: Array.from({ length: 13 }, () => ({ narration: 'y' })) }).expect(422);
    await submit('', { prompt: 'x', size: '32x32' }).expect(422);
    await submit('', { prompt: 'x', seconds_per_scene: 61 }).expect(422);
    await submit('', { prompt: 'x', colour: 'blue' }).expect(422);
    const long = await submit('', { scenes: [{ narration: 'word '.repeat(150).trim() }] }).expect(422);
    expect(long.body.errors).toEqual([expect.objectContaining({ path: 'body.scenes.0.narration' })]);
    const foreignFolder = await request(t.app)
      .post(`/${cast.b.site.slug}/media/folders/`)
      .set(cast.b.admin.auth)
      .send({ name: 'Theirs' })
      .expect(201);
    const wrongFolder = await submit('', { prompt: 'x', folder_id: foreignFolder.body.id }).expect(422);
    expect(wrongFolder.body.errors).toEqual([expect.objectContaining({ path: 'body.folder_id' })]);
    const unknownImage = await submit('', {
      scenes: [{ narration: 'a' }, { media_id: '00000000-0000-4000-8000-000000000000' }],
    }).expect(422);
    expect(unknownImage.body.errors).toEqual([expect.objectContaining({ path: 'body.scenes.1.media_id' })]);
    const poor = await submit('', { prompt: 'x' }, cast.author.auth).expect(402);
    expect(poor.body).toMatchObject({ available: 0, required: 20 });
    await request(t.app).post(`/${site()}/media/generatevideo`).send({ prompt: 'x' }).expect(401);
    await submit('', { prompt: 'x' }, cast.b.admin.auth).expect(404);
    await submit('-varianta', { prompt: 'x' }, cast.b.admin.auth).expect(404);
    await submit('', { prompt: 'x' }, cast.noScope).expect(403);
    await submit('-variantb', { prompt: 'x' }, cast.reader).expect(403);
    // What the vendors' models cannot do: show the site's images; a size their model does not make (Kling: 1080p frames).
    const image = await t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
      insert into media_items (tenant_id, site_id, kind, mime_type, storage_key, status) values (${cast.a.tenant.id}, ${cast.a.site.id}, 'image', 'image/png', ${`x/${Date.now()}.png`}, 'ready') returning id`);
    const shown = await submit('-varianta', { scenes: [{ narration: 'a' }, { media_id: image.toUpperCase() }] }).expect(
      422,
    );
    expect(shown.body.errors).toEqual([
      { path: 'body.scenes.1.media_id', message: `${seedance} cannot show images of the site` },
    ]);
    const small = await submit('-variantb', { prompt: 'x', size: '640x360' }).expect(422);
    expect(small.body.errors).toEqual([expect.objectContaining({ path: 'body.size' })]);
    // Locally an image named in upper case is found: the request gets as far as the credits.
    await submit(
      '',
      { scenes: [{ narration: 'a' }, { media_id: image.toUpperCase(), duration_seconds: 1 }] },
      cast.author.auth,
    ).expect(402);
    expect(await videoJobs()).toBe(before);
  });

  // The variants no longer need a back end of their own: with no vendor named they compose locally (an empty
  // VIDEO_*_PROVIDERS reads as unset), so no video endpoint answers 503 for want of configuration.
  it('composes every variant locally when nothing is configured: the request gets as far as the credits', async () => {
    const bare = await startTestApp();
    try {
      const { a } = await mediaCast(bare);
      for (const variant of ['', '-varianta', '-variantb']) {
        const res = await request(bare.app)
          .post(`/${a.site.slug}/media/generatevideo${variant}`)
          .set(a.editor.auth)
          .send({ prompt: 'x' })
          .expect(402);
        expect(res.body).toMatchObject({ available: 0, required: 20 });
      }
    } finally {
      await stopTestApp(bare);
    }
  });
});
