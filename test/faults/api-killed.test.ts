// `npm run api` killed with SIGKILL in the middle of uploads and job submits:
// media uploads and PDF imports streamed slowly (so the kill lands mid-body
// for some, after the file is stored for others) and image jobs submitted
// meanwhile. Afterwards every credit reservation has its job and every job
// its queue entry, every item its file; files left without their row (a
// stored upload whose item never committed, half a write) are removed by the
// sweep (core/media/orphans.ts), after which every stored file has its row.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import os from 'node:os';
import path from 'node:path';
import sharp from 'sharp';
import { z } from 'zod';
import { sweepOrphans, unreferencedKeys } from '../../core/media/orphans.ts';
import { sql } from '../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { expectLedgerHolds } from '../helpers/ledger.ts';
import { giveCredits } from '../helpers/jobs.ts';
import { staffedTenant, type Staffed } from '../helpers/identity.ts';
import { makePdf } from '../helpers/pdf.ts';
import { startProcess, stopProcess, type Started } from '../helpers/processes.ts';

let dataDir: string;
let t: TestApp;
let staff: Staffed;
let api: Started | undefined;

beforeAll(async () => {
  dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-killed-'));
  t = await startTestApp({ env: { DATA_DIR: dataDir } });
  staff = await staffedTenant(t);
  await giveCredits(t, staff.site, 1_000_000, staff.editor.user.id);
});
afterAll(async () => {
  if (api) await stopProcess(api, 'SIGKILL');
  await stopTestApp(t);
  rmSync(dataDir, { recursive: true, force: true });
});

type Outcome = { status: number } | { cut: true };

/**
 * A multipart upload of `file` in a part named file, sent 16 KiB every
 * `everyMs`, so that it takes a while to arrive; resolves with the answer's
 * status, or `cut` when the connection dies first.
 */
function slowUpload(url: string, file: Buffer, name: string, type: string, everyMs = 30): Promise<Outcome> {
  const boundary = `----kill${randomBytes(8).toString('hex')}`;
  const head = Buffer.from(
    `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="${name}"\r\nContent-Type: ${type}\r\n\r\n`,
  );
  const tail = Buffer.from(`\r\n--${boundary}--\r\n`);
  return new Promise((resolve) => {
    const req = httpRequest(
      url,
      {
        method: 'POST',
        headers: { ...staff.editor.auth, 'Content-Type': `multipart/form-data; boundary=${boundary}` },
      },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
        res.on('error', () => resolve({ cut: true }));
      },
    );
    req.on('error', () => resolve({ cut: true }));
    req.write(head);
    let sent = 0;
    const next = () => {
      if (req.destroyed) return;
      if (sent >= file.length) {
        req.end(tail);
        return;
      }
      req.write(file.subarray(sent, (sent += 16 * 1024)));
      setTimeout(next, everyMs);
    };
    next();
  });
}

/** A file of `size` bytes whose type is read from its first bytes (what the upload sniffs), then padding. */
const padded = (start: Buffer, size: number) => Buffer.concat([start, randomBytes(Math.max(0, size - start.length))]);

const uuid = z.object({ id: z.string() });

describe('the API killed in the middle of uploads and submits', () => {
  it('leaves no reservation without its job, no item without its file, and nothing the sweep does not remove', async () => {
    api = await startProcess('api/main.ts', {
      DATABASE_URL: t.database.url,
      DATA_DIR: dataDir,
      NODE_ENV: 'test',
      LOG_LEVEL: 'info',
      RATE_LIMIT_PER_TOKEN: '1000000',
      RATE_LIMIT_JOBS_PER_TENANT: '1000000',
    });
    const site = `${api.url}/${staff.site.slug}`;
    const png = await sharp({ create: { width: 64, height: 64, channels: 3, background: '#884422' } })
      .png()
      .toBuffer();
    const pdf = makePdf([[{ text: 'Killed while arriving', size: 20 }]]);
    // Uploads of 64 KiB to 512 KiB (done in well under a second to a few) and four
    // that would take far longer: the kill comes once six have been answered.
    const uploads = [
      ...Array.from({ length: 8 }, (_, i) =>
        slowUpload(`${site}/media/`, padded(png, (i + 1) * 64 * 1024), 'a.png', 'image/png'),
      ),
      ...Array.from({ length: 4 }, () => slowUpload(`${site}/media/`, padded(png, 8 << 20), 'b.png', 'image/png')),
      ...Array.from({ length: 3 }, (_, i) =>
        slowUpload(`${site}/posts/from-pdf`, padded(pdf, (i + 1) * 128 * 1024), 'c.pdf', 'application/pdf'),
      ),
      slowUpload(`${site}/posts/from-pdf`, padded(pdf, 8 << 20), 'd.pdf', 'application/pdf'),
    ];
    const answered: Outcome[] = [];
    for (const upload of uploads) void upload.then((outcome) => answered.push(outcome));
    // Job submits, three at a time, until the process is gone.
    const submits: Outcome[] = [];
    const submitter = async () => {
      for (;;) {
        const res = await fetch(`${site}/media/generate`, {
          method: 'POST',
          headers: { ...staff.editor.auth, 'Content-Type': 'application/json' },
          body: JSON.stringify({ prompt: 'a submit cut short', size: '256x256' }),
        }).catch(() => undefined);
        if (!res) return;
        submits.push({ status: res.status });
        await res.body?.cancel();
      }
    };
    const submitting = Promise.all([submitter(), submitter(), submitter()]);

    const deadline = Date.now() + 60_000;
    while (answered.filter((outcome) => 'status' in outcome).length < 6 && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 10));
    await stopProcess(api, 'SIGKILL');
    const killedAt = new Date();
    api = undefined;
    const outcomes = await Promise.all(uploads);
    await submitting;

    // Every reservation has its job, every job not finished its queue entry, and the ledger adds up.
    const lonelyReservations = await t.services.db.anyFirst(sql.type(uuid)`
      select e.id from credit_entries e
      where e.kind = 'reservation' and not exists (select from jobs j where j.id = e.job_id)`);
    expect(lonelyReservations).toEqual([]);
    const unqueued = await t.services.db.anyFirst(sql.type(uuid)`
      select j.id from jobs j
      where j.finished_at is null and not exists (select from graphile_worker.jobs q where q.key = 'job:' || j.id)`);
    expect(unqueued).toEqual([]);
    await expectLedgerHolds(t);

    // Every item has its file; what was stored without its row is found, and swept.
    const items = await t.services.db.anyFirst(
      sql.type(
        z.object({ storage_key: z.string() }),
      )`select storage_key from media_items where site_id = ${staff.site.id}`,
    );
    for (const key of items) expect(await t.services.storage.size(key)).not.toBeNull();
    const stored = async () => {
      const keys: string[] = [];
      for await (const object of t.services.storage.list()) keys.push(object.key);
      return keys;
    };
    const left = await stored();
    const orphans = await unreferencedKeys(t.services.db, staff.site.id, left);
    const swept = await sweepOrphans(t.services, killedAt);
    const after = await stored();
    expect(await unreferencedKeys(t.services.db, staff.site.id, after)).toEqual([]);
    expect(swept.removed).toBe(orphans.length);
    for (const key of items) expect(after).toContain(key);

    const figures = {
      uploads: outcomes.length,
      uploads_answered: outcomes.filter((outcome) => 'status' in outcome).length,
      uploads_cut: outcomes.filter((outcome) => 'cut' in outcome).length,
      submits_answered: submits.length,
      items: items.length,
      files_left: left.length,
      orphans_before_sweep: orphans.length,
      partial_files: orphans.filter((key) => key.endsWith('.partial')).length,
      removed_by_sweep: swept.removed,
    };
    console.info(`API killed mid-upload: ${JSON.stringify(figures)}`);
    expect(figures.uploads_cut).toBeGreaterThan(0);
    expect(figures.submits_answered).toBeGreaterThan(0);
    expect(outcomes.filter((outcome) => 'status' in outcome && ![201, 202].includes(outcome.status))).toEqual([]);
  }, 120_000);
});
