// The sweep of stored files that no row refers to (core/media/orphans.ts,
// the storage__sweep task), on both storage drivers: what a process killed
// between writing a file and committing its row leaves is removed once it is
// old enough; an item's file, its variants and versions, a PDF import's
// upload, anything written since the cut and keys of another shape stay.
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import request from 'supertest';
import { z } from 'zod';
import { enqueue } from '../../core/jobs/enqueue.ts';
import { sweepOrphans } from '../../core/media/orphans.ts';
import { sql } from '../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { newJob, startTestWorker, waitForJob } from '../helpers/jobs.ts';
import { staffedTenant, type Staffed } from '../helpers/identity.ts';
import { startLocalS3, type LocalS3 } from '../helpers/s3.ts';

let s3: LocalS3;
let folder: string;
beforeAll(async () => {
  s3 = await startLocalS3();
  folder = mkdtempSync(path.join(os.tmpdir(), 'sweep-test-'));
});
afterAll(async () => {
  await s3.close();
  rmSync(folder, { recursive: true, force: true });
});

const drivers: [string, () => Record<string, string>][] = [
  ['local', () => ({ DATA_DIR: folder })],
  ['s3', () => s3.env],
];

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(drivers)('the sweep on the %s driver', (_name, env) => {
  let t: TestApp;
  let staff: Staffed;
  beforeAll(async () => {
    t = await startTestApp({ env: env() });
    staff = await staffedTenant(t);
  });
  afterAll(() => stopTestApp(t));

  const keys = async () => {
    const all: string[] = [];
    for await (const object of t.services.storage.list()) all.push(object.key);
    return all;
  };
  const put = (key: string) => t.services.storage.put(key, Buffer.from(key), 'application/octet-stream');

  it('removes the old files no row refers to and keeps the rest', async () => {
    const { site } = staff;
    const prefix = `${site.tenant_id}/${site.id}`;
    // An upload, processed by a worker: its file and its variants.
    const worker = await startTestWorker(t, env());
    let item: { id: string; storage_key: string; variants: { key: string }[] };
    try {
      const png = await sharp({ create: { width: 900, height: 600, channels: 3, background: '#3366aa' } })
        .png()
        .toBuffer();
      const res = await request(t.app)
        .post(`/${site.slug}/media/`)
        .set(staff.editor.auth)
        .attach('file', png, 'kept.png')
        .expect(201);
      expect((await waitForJob(t, res.body.job_id, ['succeeded', 'failed'])).status).toBe('succeeded');
      item = await t.services.db.one(
        sql.type(
          z.object({ id: z.string(), storage_key: z.string(), variants: z.array(z.object({ key: z.string() })) }),
        )`
          select id, storage_key, variants from media_items where id = ${res.body.id}`,
      );
    } finally {
      await worker.stop();
    }
    expect(item.variants.length).toBeGreaterThan(0);
    // An earlier version of the item, and the upload a PDF import has still to read.
    const version = `${prefix}/${randomUUID()}`;
    await put(version);
    await t.services.db.query(sql.typeAlias('void')`
      insert into media_versions (tenant_id, media_id, version, storage_key, mime_type, size_bytes, created_at)
      values (${site.tenant_id}, ${item.id}, 1, ${version}, 'image/png', 1, now())`);
    const pdf = `${prefix}/${randomUUID()}`;
    await put(pdf);
    await newJob(t, site, { kind: 'pdf_import', input: { file_key: pdf, file_name: 'a.pdf', max_pages: 5 } });
    // What killed processes leave: a stored upload without its row, half a write, a deleted site's file.
    const orphans = [
      `${prefix}/${randomUUID()}`,
      `${prefix}/${randomUUID()}.${randomUUID()}.partial`,
      `${site.tenant_id}/${randomUUID()}/${randomUUID()}`,
    ];
    for (const key of orphans) await put(key);
    const foreign = `exports/${randomUUID()}.csv`;
    await put(foreign);
    // Timestamps in listings may be whole seconds.
    await pause(1100);
    const cut = new Date();
    await pause(1100);
    const fresh = `${prefix}/${randomUUID()}`;
    await put(fresh);

    const before = await keys();
    const swept = await sweepOrphans(t.services, cut);
    const after = await keys();

    expect(swept).toEqual({ listed: before.length, removed: orphans.length });
    for (const key of orphans) expect(after).not.toContain(key);
    for (const key of [item.storage_key, ...item.variants.map((variant) => variant.key), version, pdf, fresh, foreign])
      expect(after).toContain(key);
    // Again: nothing left to remove.
    expect((await sweepOrphans(t.services, cut)).removed).toBe(0);
  });

  it('runs daily as the storage__sweep task, which judges what is older than its grace', async () => {
    const orphan = `${staff.site.tenant_id}/${staff.site.id}/${randomUUID()}`;
    await put(orphan);
    const worker = await startTestWorker(t, env(), undefined);
    try {
      await enqueue(t.services.db, 'storage__sweep', { grace_minutes: 60 });
      await untilQueueEmpty(t);
      expect(await keys()).toContain(orphan);
      await enqueue(t.services.db, 'storage__sweep', { grace_minutes: 0 });
      await untilQueueEmpty(t);
      expect(await keys()).not.toContain(orphan);
    } finally {
      await worker.stop();
    }
  });
});

async function untilQueueEmpty(t: TestApp): Promise<void> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const left = await t.services.db.oneFirst(
      sql.type(z.object({ count: z.number() }))`select count(*)::int as count from graphile_worker.jobs`,
    );
    if (left === 0) return;
    await pause(50);
  }
  throw new Error('the queue did not empty');
}
