// A write held past its endpoint's timeout: the client gets its 504, the
// statement waiting in PostgreSQL is cancelled there, and nothing is written,
// even once what held it lets go. The endpoint is the real PATCH of a media
// item, with its manifest timeout shortened to one second.
import pg from 'pg';
import request from 'supertest';
import { z } from 'zod';
import { allEndpoints } from '../../api/manifest.ts';
import { insertMedia } from '../../core/media/items.ts';
import { sql } from '../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { staffedTenant, type Staffed } from '../helpers/identity.ts';
import { pollUntil } from '../helpers/poll.ts';

const patchKey = 'PATCH /{site_identifier}/media/{media_id}';

let t: TestApp;
let a: Staffed;
beforeAll(async () => {
  const endpoints = allEndpoints.map((endpoint) =>
    endpoint.key === patchKey ? { ...endpoint, timeoutMs: 1000 } : endpoint,
  );
  t = await startTestApp({ endpoints });
  a = await staffedTenant(t);
});
afterAll(() => stopTestApp(t));

/** Statements of this database waiting for a lock: the PATCH's, until it is cancelled. */
const waitingForTheRow = () =>
  t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
    select count(*)::int as count from pg_stat_activity
    where datname = current_database() and state = 'active' and wait_event_type = 'Lock'`);

it('answers 504, cancels the waiting update and writes nothing', async () => {
  const item = await insertMedia(
    t.services.db,
    { tenantId: a.tenant.id, siteId: a.site.id, jobId: null, createdBy: a.editor.user.id },
    {
      kind: 'image',
      mimeType: 'image/png',
      sizeBytes: 3,
      storageKey: `${a.tenant.id}/${a.site.id}/held`,
      fileName: 'held.png',
    },
  );
  // Another session holds the row, as a long transaction elsewhere would.
  const holder = new pg.Client({ connectionString: t.database.url });
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query('select 1 from media_items where id = $1 for update', [item.id]);

    const started = Date.now();
    const answer = request(t.app)
      .patch(`/${a.site.slug}/media/${item.id}`)
      .set(a.editor.auth)
      .send({ alt: 'written after the deadline' })
      .then((res) => res);
    // Before the deadline the PATCH waits on the row.
    expect(await pollUntil(waitingForTheRow, (waiting) => waiting > 0)).toBe(1);
    const res = await answer;
    expect(res.status).toBe(504);
    expect(res.body).toMatchObject({ status: 504, detail: 'The request did not complete within 1 s.' });
    expect(Date.now() - started).toBeLessThan(10_000);

    // The cancel reaches the server at the deadline; give it a moment to act.
    expect(await pollUntil(waitingForTheRow, (waiting) => waiting === 0, { everyMs: 100 })).toBe(0);
  } finally {
    await holder.query('rollback');
    await holder.end();
  }
  // Let go of the row: had the update only been abandoned, it would commit now.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const alt = await t.services.db.oneFirst(
    sql.type(z.object({ alt: z.string() }))`select alt from media_items where id = ${item.id}`,
  );
  expect(alt).toBe('');
  await request(t.app).get(`/${a.site.slug}/media/${item.id}`).set(a.editor.auth).expect(200);
});
