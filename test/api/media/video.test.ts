// POST /{site}/media/generatevideo and its two variants: a video from a prompt
// or a script, as a job paid per second. generatevideo composes it here
// (scene pictures, espeak narration, ffmpeg); variant A hands it to the media
// provider and finishes on its signed webhook; variant B asks an
// OpenAI-compatible /videos API and polls it.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { estimateVideoSeconds, videoRequest } from '../../../core/media/video.ts';
import { probeBuffer, type Probe } from '../../../worker/media/ffmpeg.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { signedDelivery, type FakeProviders } from '../../helpers/fake-providers.ts';
import { ledgerFor, startTestWorker, waitForJob } from '../../helpers/jobs.ts';
import { mediaCast, mediaSuite, testClip, type MediaCast } from '../../helpers/media.ts';

const secret = 'video-webhook-secret-0123456789';
const backends = (fake: FakeProviders) => ({
  MEDIA_PROVIDER_URL: fake.url,
  MEDIA_PROVIDER_WEBHOOK_SECRET: secret,
  PUBLIC_URL: 'http://127.0.0.1:1',
  AI_BASE_URL: fake.url,
  AI_API_KEY: 'video-key',
  VIDEO_POLL_INTERVAL_MS: '20',
});

let t: TestApp;
let cast: MediaCast;
let fake: FakeProviders;
const suite = mediaSuite(backends);
beforeAll(async () => {
  ({ t, cast, fake } = suite);
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

describe('generatevideo (composed here)', () => {
  it('makes an H.264 MP4 of the scenes asked for, with a poster, and charges its seconds', async () => {
    suite.worker = await startTestWorker(t, backends(fake));
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
      output: { backend: 'local', provider: 'local', scenes: 2, codec: 'h264' },
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
    suite.worker = await startTestWorker(t, backends(fake));
    const body = { prompt: 'The sun rises. Birds sing.', size: '640x360', seconds_per_scene: 1 };
    const res = await submit('', body).set('Prefer', 'wait=120').expect(200);
    expect(res.body).toMatchObject({
      status: 'succeeded',
      output: { scenes: 2 },
      credits_reserved: 5 * estimateVideoSeconds(videoRequest.parse(body), 'local'),
    });
    const found = await probed(res.body.media_id);
    expect(found.codec).toBe('h264');
    expect(found.hasAudio).toBe(true);
    // Two spoken sentences, each followed by half a second: longer than the 1 s per scene asked for.
    expect(found.durationSeconds).toBeGreaterThan(2.5);
    expect(res.body.credits_charged).toBeLessThanOrEqual(res.body.credits_reserved);
  });
});

describe('generatevideo-varianta (the media provider, by webhook)', () => {
  it('hands the script over, waits, and finishes with the delivered video; a bad signature is refused, a duplicate ignored', async () => {
    suite.worker = await startTestWorker(t, backends(fake));
    const res = await submit('-varianta', { prompt: 'A storm over the sea.', size: '640x360' }).expect(202);
    const waiting = await waitForJob(t, res.body.id, ['waiting', 'failed', 'succeeded']);
    expect(waiting.status).toBe('waiting');
    const accepted = fake.accepted.find((entry) => entry.reference === res.body.id)!;
    expect(accepted.input).toMatchObject({ prompt: 'A storm over the sea.', size: '640x360' });
    expect(accepted.callback_url).toBe(`http://127.0.0.1:1/${cast.a.site.id}/media/webhook/mediaprovider`);
    fake.files.set('storm.mp4', await testClip(t.config, 3));
    const delivery = {
      job_ref: accepted.id,
      reference: res.body.id,
      status: 'succeeded',
      output: { video_url: `${fake.url}/files/storm.mp4` },
    };
    const signed = signedDelivery(secret, delivery);
    const hook = `/${cast.a.site.id}/media/webhook/mediaprovider`;
    await request(t.app)
      .post(hook)
      .set({ ...signed.headers, 'webhook-signature': 'v1,AAAA' })
      .send(signed.raw)
      .expect(401);
    await request(t.app)
      .post(hook)
      .set(signed.headers)
      .send(signed.raw)
      .expect(200, { received: true, outcome: 'accepted', job_id: res.body.id });
    await request(t.app)
      .post(hook)
      .set(signed.headers)
      .send(signed.raw)
      .expect(200, { received: true, outcome: 'duplicate', job_id: null });
    const done = await waitForJob(t, res.body.id, ['succeeded', 'failed']);
    expect(done).toMatchObject({ status: 'succeeded', provider: 'mediaprovider' });
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

  it('fails, charging nothing, when the delivery is not a video', async () => {
    suite.worker = await startTestWorker(t, backends(fake));
    const res = await submit('-varianta', { prompt: 'Nothing to see.', size: '640x360' }).expect(202);
    await waitForJob(t, res.body.id, ['waiting']);
    const accepted = fake.accepted.find((entry) => entry.reference === res.body.id)!;
    const signed = signedDelivery(secret, {
      job_ref: accepted.id,
      status: 'succeeded',
      output: { video_base64: Buffer.from('not a video').toString('base64') },
    });
    await request(t.app)
      .post(`/${cast.a.site.id}/media/webhook/mediaprovider`)
      .set(signed.headers)
      .send(signed.raw)
      .expect(200);
    const done = await waitForJob(t, res.body.id, ['succeeded', 'failed']);
    expect(done).toMatchObject({ status: 'failed', credits_charged: 0, error: { code: 'provider_invalid_response' } });
  });
});

describe('generatevideo-variantb (an OpenAI-compatible /videos API)', () => {
  it('creates the clip, polls it until done, downloads it and records the provider id for a rerun', async () => {
    fake.videos.clip = await testClip(t.config, 4, '640x360');
    fake.videos.pollsBeforeDone = 2;
    suite.worker = await startTestWorker(t, backends(fake));
    const res = await submit('-variantb', { prompt: 'A city at night, seen from above.', size: '1280x720' })
      .set('Prefer', 'wait=60')
      .expect(200);
    // The narration needs about 4.5 s: an 8 s clip is asked for and reserved; the 4 s the provider made are debited.
    expect(res.body).toMatchObject({
      status: 'succeeded',
      credits_reserved: 40,
      credits_charged: 20,
      output: { backend: 'openai', codec: 'h264' },
    });
    expect(fake.videos.created.at(-1)).toEqual({
      model: 'sora-2',
      prompt: 'A city at night, seen from above.',
      seconds: '8',
      size: '1280x720',
    });
    const created = fake.requests.filter((recorded) => recorded.path === '/videos');
    expect(created.at(-1)?.headers.authorization).toBe('Bearer video-key');
    const row = await t.services.db.one(
      sql.type(
        z.object({ provider: z.string().nullable(), provider_ref: z.string().nullable() }),
      )`select provider, provider_ref from jobs where id = ${res.body.id}`,
    );
    expect(row.provider).toBe('openai');
    expect(row.provider_ref).toMatch(/^video_/);
    expect(fake.requests.filter((recorded) => recorded.path === `/videos/${row.provider_ref}`)).toHaveLength(3);
    expect((await stages(res.body.id)).some((stage) => stage.startsWith('rendering at the provider'))).toBe(true);
  });

  it('fails at once, charging nothing, when the provider fails the clip', async () => {
    fake.videos.failWith = 'content policy';
    fake.videos.pollsBeforeDone = 0;
    suite.worker = await startTestWorker(t, backends(fake));
    try {
      const res = await submit('-variantb', { prompt: 'Something refused.' }).set('Prefer', 'wait=60').expect(200);
      expect(res.body).toMatchObject({ status: 'failed', credits_charged: 0, error: { code: 'provider_rejected' } });
      expect(res.body.error.message).toMatch(/content policy/);
      expect((await ledgerFor(t, res.body.id)).map((entry) => entry.kind)).toEqual(['reservation', 'release']);
    } finally {
      delete fake.videos.failWith;
    }
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
    await submit('', { prompt: 'x', size: '100x100' }).expect(422);
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
    // What the other back ends cannot do: show the site's images; the openai one, sizes other than 1280x720 and 720x1280.
    const image = await t.services.db.oneFirst(sql.type(z.object({ id: z.string() }))`
      insert into media_items (tenant_id, site_id, kind, mime_type, storage_key, status) values (${cast.a.tenant.id}, ${cast.a.site.id}, 'image', 'image/png', ${`x/${Date.now()}.png`}, 'ready') returning id`);
    const shown = await submit('-varianta', { scenes: [{ narration: 'a' }, { media_id: image.toUpperCase() }] }).expect(
      422,
    );
    expect(shown.body.errors).toEqual([
      { path: 'body.scenes.1.media_id', message: 'the mediaprovider back end cannot show images of the site' },
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

  it('answers 503 for a back end that is not configured, before reserving anything', async () => {
    const bare = await startTestApp();
    try {
      const { a } = await mediaCast(bare);
      const imagesByOpenAi = await startTestApp({ env: { IMAGE_PROVIDER: 'openai' } });
      try {
        const { a: other } = await mediaCast(imagesByOpenAi);
        const res = await request(imagesByOpenAi.app)
          .post(`/${other.site.slug}/media/generatevideo`)
          .set(other.editor.auth)
          .send({ prompt: 'x' })
          .expect(503);
        expect(res.body.detail).toMatch(/VIDEO_PROVIDER=local: .*AI_BASE_URL/);
      } finally {
        await stopTestApp(imagesByOpenAi);
      }
      for (const variant of ['-varianta', '-variantb']) {
        const res = await request(bare.app)
          .post(`/${a.site.slug}/media/generatevideo${variant}`)
          .set(a.editor.auth)
          .send({ prompt: 'x' })
          .expect(503);
        expect(res.body).toMatchObject({ type: '/problems/not-configured', status: 503 });
        expect(res.body.detail).toMatch(
          variant === '-varianta' ? /VIDEO_VARIANT_A_PROVIDER=mediaprovider/ : /VIDEO_VARIANT_B_PROVIDER=openai/,
        );
      }
    } finally {
      await stopTestApp(bare);
    }
  });
});
