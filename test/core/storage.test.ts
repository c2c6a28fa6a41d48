// Both storage drivers keep the same promises: whole objects replaced
// atomically, byte ranges, sizes, deletion, and streams that are never held
// in memory whole. The S3 driver runs against a real S3-compatible server on
// 127.0.0.1. A speech job (through OpenAI's strict fake) stores its audio
// through S3 when so configured.
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { z } from 'zod';
import { loadConfig } from '../../core/config.ts';
import { createStorage } from '../../core/storage/index.ts';
import { localStorage } from '../../core/storage/local.ts';
import type { Storage } from '../../core/storage/storage.ts';
import { addMember } from '../../core/tenancy/memberships.ts';
import { sql } from '../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { newSite, newTenant, newUser } from '../helpers/factories.ts';
import { startFakeOpenAI, type FakeOpenAI } from '../helpers/fakes/openai.ts';
import { giveCredits, startTestWorker, submitAs, waitForJob } from '../helpers/jobs.ts';
import { startLocalS3, type LocalS3 } from '../helpers/s3.ts';

let s3: LocalS3;
let folder: string;
beforeAll(async () => {
  s3 = await startLocalS3();
  folder = mkdtempSync(path.join(os.tmpdir(), 'storage-test-'));
});
afterAll(async () => {
  await s3.close();
  rmSync(folder, { recursive: true, force: true });
});

const drivers: [string, () => Storage][] = [
  ['local', () => localStorage(folder)],
  ['s3', () => createStorage(loadConfig({ NODE_ENV: 'test', ...s3.env }))],
];

const bytes = async (stream: Readable | null) => (stream ? Buffer.concat(await stream.toArray()) : null);

describe.each(drivers)('the %s driver', (_name, make) => {
  it('stores, replaces, reads, measures and deletes an object', async () => {
    const storage = make();
    const key = `tenant/site/${Date.now()}.txt`;
    expect(await storage.size(key)).toBeNull();
    expect(await storage.read(key)).toBeNull();
    await storage.put(key, Buffer.from('first version'), 'text/plain');
    expect(await storage.put(key, Buffer.from('the second version'), 'text/plain')).toEqual({ key, size: 18 });
    expect(await text((await storage.read(key))!)).toBe('the second version');
    expect(await text((await storage.read(key, { start: 4, end: 9 }))!)).toBe('second');
    expect(await storage.size(key)).toBe(18);
    await storage.delete(key);
    expect(await storage.size(key)).toBeNull();
    // Deleting what is gone is not an error.
    await storage.delete(key);
  });

  it('streams a large object in and out intact (multipart on S3)', async () => {
    const storage = make();
    const key = `tenant/site/large-${Date.now()}.bin`;
    const chunk = Buffer.alloc(1024 * 1024);
    for (let i = 0; i < chunk.length; i++) chunk[i] = i % 251;
    const megabytes = 12;
    // A generator: the body is produced as it is sent, never whole in memory.
    const body = Readable.from(
      (function* () {
        for (let i = 0; i < megabytes; i++) yield chunk;
      })(),
    );
    expect(await storage.put(key, body, 'application/octet-stream')).toEqual({ key, size: megabytes * chunk.length });
    const back = await bytes(await storage.read(key));
    expect(back?.length).toBe(megabytes * chunk.length);
    expect(back?.subarray(5 * chunk.length, 6 * chunk.length).equals(chunk)).toBe(true);
    const tail = await bytes(
      await storage.read(key, { start: megabytes * chunk.length - 10, end: megabytes * chunk.length - 1 }),
    );
    expect(tail?.equals(chunk.subarray(chunk.length - 10))).toBe(true);
    await storage.delete(key);
  });

  it('refuses keys that could leave their place', async () => {
    const storage = make();
    for (const key of ['../escape', '/absolute', 'a/../../b', 'with space', '']) {
      await expect(storage.put(key, Buffer.from('x'), 'text/plain')).rejects.toThrow(/invalid storage key/);
    }
  });
});

describe('a speech job with STORAGE_DRIVER=s3', () => {
  let t: TestApp;
  let fake: FakeOpenAI;
  const env = () => ({
    ...s3.env,
    SPEECH_PROVIDERS: 'openai',
    OPENAI_BASE_URL: fake.url,
    OPENAI_API_KEY: fake.apiKey,
  });
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    t = await startTestApp({ env: env() });
  });
  afterAll(async () => {
    await stopTestApp(t);
    await fake.close();
  });

  it('stores its audio in the bucket, of the size the media item says', async () => {
    const tenant = await newTenant(t);
    const site = await newSite(t, tenant);
    const user = await newUser(t);
    await addMember(t.services.db, tenant.id, user.id, 'admin');
    await giveCredits(t, site, 100, user.id);
    const worker = await startTestWorker(t, env());
    try {
      const job = await submitAs(t, { kind: 'user', userId: user.id, sessionId: 'test', isGlobalAdmin: false }, site, {
        kind: 'speech',
        input: { text: 'Stored in a bucket.', voice: 'default', language: 'en', speed: 1, format: 'mp3' },
        estimatedUnits: 5,
      });
      const done = await waitForJob(t, job.id, ['succeeded', 'failed']);
      expect(done).toMatchObject({ status: 'succeeded', output: { provider: 'openai' } });
      const media = await t.services.db.one(sql.type(z.object({ storage_key: z.string(), size_bytes: z.number() }))`
        select storage_key, size_bytes from media_items where id = ${done.media_id}`);
      const stored = createStorage(t.config);
      expect(stored.driver).toBe('s3');
      expect(await stored.size(media.storage_key)).toBe(media.size_bytes);
      const head = await bytes(await stored.read(media.storage_key, { start: 0, end: 2 }));
      // An MP3 starts with an ID3 tag or a frame sync.
      expect(head?.toString('latin1') === 'ID3' || (head![0] === 0xff && (head![1]! & 0xe0) === 0xe0)).toBe(true);
    } finally {
      await worker.stop();
    }
  });
});
