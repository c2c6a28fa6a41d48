// The read replica against a real streaming standby started beside its
// primary (db/embedded-standby.ts). What a read shows proves which server
// answered it: with the standby's replay paused, a change made on the primary
// is missing from an answer the replica gave, and present in one the primary
// gave. Public delivery, search and statistics read the replica; a caller
// reads their own writes; a replica too far behind, stopped, or not a standby
// at all leaves every read to the primary, and none fails.
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import request from 'supertest';
import { createApp } from '../../api/app.ts';
import { closeServices, createServices } from '../../core/boot.ts';
import { createLogger } from '../../core/logger.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import { startEmbeddedPair, type EmbeddedPair } from '../../db/embedded-standby.ts';
import { migrate } from '../../db/migrate.ts';
import { sql } from '../../db/pool.ts';
import { accessChangeHeard, checkedAgainstDocument, testConfig, type TestApp } from '../helpers/app.ts';
import { createElement, createType, type ElementRow } from '../helpers/content.ts';
import { staffedTenant, unique, type Auth, type Staffed } from '../helpers/identity.ts';
import { pollUntil } from '../helpers/poll.ts';

let dir: string;
let pair: EmbeddedPair;
/** Reads the replica while it is up to a minute behind: what it has not replayed stays visibly missing. */
let t: TestApp;
/** Reads the replica only while it is at most 300 ms behind. */
let strict: TestApp;
let s: Staffed;
let site: Site;
let article: ElementRow;
let articles: string;

async function replicaApp(env: Record<string, string>, readUrl = pair.standby.urlFor('app')): Promise<TestApp> {
  const url = pair.primary.urlFor('app');
  const config = testConfig({ DATABASE_URL: url, DATABASE_READ_URL: readUrl, ...env });
  const services = await createServices(config, url, createLogger(config.logLevel), 'test');
  const database = { name: 'app', url, drop: async () => undefined };
  return { app: checkedAgainstDocument(createApp(services), {}), services, database, config };
}

async function onServer<T>(url: string, query: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(query)).rows as T[];
  } finally {
    await client.end();
  }
}

const pauseReplay = () => onServer(pair.standby.adminUrl, 'select pg_wal_replay_pause()');
const resumeReplay = () => onServer(pair.standby.adminUrl, 'select pg_wal_replay_resume()');

/** Waits until the standby has replayed everything the primary has flushed. */
async function caughtUp(): Promise<void> {
  const [{ lsn }] = (await onServer<{ lsn: string }>(
    pair.primary.adminUrl,
    'select pg_current_wal_flush_lsn()::text as lsn',
  )) as [{ lsn: string }];
  const behind = await pollUntil(
    () =>
      onServer<{ behind: boolean }>(
        pair.standby.adminUrl,
        `select pg_wal_lsn_diff('${lsn}', pg_last_wal_replay_lsn()) > 0 as behind`,
      ),
    (rows) => rows[0]?.behind === false,
    { tries: 300, everyMs: 50 },
  );
  expect(behind[0]?.behind).toBe(false);
}

/** What the app's /health says of the replica, once it says `status` (and an error matching `error`). */
async function replicaHealth(app: TestApp, status: 'up' | 'down', error = /./) {
  const res = await pollUntil(
    () => request(app.app).get('/health'),
    (res) =>
      res.body.checks.replica?.status === status && (status === 'up' || error.test(res.body.checks.replica.error)),
    { tries: 300, everyMs: 50 },
  );
  expect(res.status).toBe(200);
  expect(res.body.checks.replica.status).toBe(status);
  return res.body as { status: string; checks: { replica: { lag_ms: number | null; error?: string } } };
}

const titleOf = async (app: TestApp, auth: Auth | Record<string, never> = {}) => {
  const res = await request(app.app).get(`/public/${site.slug}/elements/${article.id}?depth=0`).set(auth).expect(200);
  return res.body.data.title as string;
};
/** Hits of the word itself (a query that finds nothing is answered for a corrected one: that counts as none). */
const searchHits = async (app: TestApp, word: string, auth: Auth | Record<string, never> = {}) => {
  const res = await request(app.app).get(`/search/sites/${site.slug}?q=${word}`).set(auth).expect(200);
  return res.body.corrected_query === null ? (res.body.total as number) : 0;
};
const elementCount = async (app: TestApp, auth: Auth) =>
  (await request(app.app).get(`/${site.slug}/site-statistics/overview`).set(auth).expect(200)).body.content
    .elements as number;

/** A new title for the article, written through `app` by the site's editor; answers it. */
async function retitle(app: TestApp): Promise<string> {
  const title = `Title${unique()}`;
  await request(app.app)
    .patch(`/${site.slug}/elements/${article.id}`)
    .set(s.editor.auth)
    // Published at once: without the status, the edit of a published element would wait in its draft.
    .send({ data: { title }, status: 'published' })
    .expect(200);
  return title;
}

/** The article's title and the site's element count (as `auth` reads it) once the replica holds everything. */
async function replicated(auth: Auth) {
  await replicaHealth(t, 'up');
  await caughtUp();
  return { before: await titleOf(t), count: await elementCount(t, auth) };
}

/** Runs `body` with the standby's replay paused, resuming it whatever happens. */
async function whilePaused(body: () => Promise<void>): Promise<void> {
  await caughtUp();
  await pauseReplay();
  try {
    await body();
  } finally {
    await resumeReplay();
  }
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'replica-test-'));
  // As root the clusters run as the postgres user, who must enter the folder.
  chmodSync(dir, 0o755);
  pair = await startEmbeddedPair({
    dir,
    logger: createLogger('warn'),
    settings: { fsync: 'off', max_connections: '100' },
    async prepare(primary) {
      await onServer(primary.adminUrl, 'create database app');
      await migrate(primary.urlFor('app'));
    },
  });
  t = await replicaApp({ DATABASE_READ_MAX_LAG_MS: '60000' });
  strict = await replicaApp({ DATABASE_READ_MAX_LAG_MS: '300' });
  s = await staffedTenant(t);
  site = s.site;
  await t.services.db.query(sql.typeAlias('void')`update sites set visibility = 'public' where id = ${site.id}`);
  await Promise.all([accessChangeHeard(t), accessChangeHeard(strict)]);
  articles = `article_${unique()}`;
  await createType(t, s.editor.auth, site, {
    api_id: articles,
    fields: [{ id: 'title', label: 'Title', type: 'text', required: true }],
  });
  article = await createElement(t, s.editor.auth, site, {
    type: articles,
    data: { title: 'Firsttitle' },
    status: 'published',
  });
}, 120_000);

afterAll(async () => {
  for (const app of [t, strict]) if (app) await closeServices(app.services);
  await pair?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('reads that go to the replica', () => {
  it('public delivery, search and statistics show what the replica has replayed, within the lag bound', async () => {
    const { before, count } = await replicated(s.admin.auth);
    await whilePaused(async () => {
      // The editor changes the article and adds one; the primary has both, the paused standby neither.
      const title = await retitle(t);
      await createElement(t, s.editor.auth, site, { type: articles, data: { title: 'Another' }, status: 'published' });
      expect(await titleOf(t)).toBe(before);
      expect(await searchHits(t, title)).toBe(0);
      expect(await elementCount(t, s.admin.auth)).toBe(count);
      expect(t.services.replica!.state().reads.replica).toBeGreaterThan(0);
    });
    // Replayed, the change is served at once: the stale answer read meanwhile was not kept in the public cache.
    await caughtUp();
    const after = await pollUntil(
      () => titleOf(t),
      (title) => title !== before,
      { tries: 100, everyMs: 50 },
    );
    expect(after).not.toBe(before);
    expect(await elementCount(t, s.admin.auth)).toBe(count + 1);
  });

  it('a caller reads their own writes from the primary while the replica has not replayed them', async () => {
    const { before, count } = await replicated(s.editor.auth);
    await whilePaused(async () => {
      const title = await retitle(t);
      // Anyone else reads the replica, and sees the title it has replayed...
      expect(await titleOf(t)).toBe(before);
      expect(await searchHits(t, title)).toBe(0);
      // ...the writer, with their token (public routes take none, but this process knows it), their own at once.
      // (What the primary answered them is fresh, so the public cache keeps it for everyone.)
      expect(await titleOf(t, s.editor.auth)).toBe(title);
      expect(await searchHits(t, title, s.editor.auth)).toBe(1);

      await createElement(t, s.editor.auth, site, { type: articles, data: { title: 'More' }, status: 'published' });
      expect(await elementCount(t, s.editor.auth)).toBe(count + 1);
      expect(await elementCount(t, s.admin.auth)).toBe(count);
    });
  });
});

describe('when the replica cannot serve', () => {
  it('falls behind: past the lag bound, public reads go to the primary and see the change', async () => {
    await replicaHealth(strict, 'up');
    await whilePaused(async () => {
      // Written through the other process: nobody reading through `strict` has written anything.
      const title = await retitle(t);
      const served = await pollUntil(
        () => titleOf(strict),
        (seen) => seen === title,
        { tries: 200, everyMs: 50 },
      );
      expect(served).toBe(title);
      // The replica still has the old title: the answer came from the primary.
      const [held] = await onServer<{ title: string }>(
        pair.standby.urlFor('app'),
        `select data->>'title' as title from content_elements where id = '${article.id}'`,
      );
      expect(held?.title).not.toBe(title);
      const health = await replicaHealth(strict, 'down');
      expect(health.status).toBe('degraded');
      expect(health.checks.replica.lag_ms).toBeGreaterThan(300);
    });
    await replicaHealth(strict, 'up');
  });

  it('is stopped: every read goes to the primary and none fails; started again, reads go back to it', async () => {
    await replicaHealth(t, 'up');
    const statuses: number[] = [];
    let reading = true;
    // Readers keep going while the standby shuts down under them.
    const readers = Array.from({ length: 4 }, async (_, i) => {
      while (reading) {
        const path =
          i % 3 === 0
            ? `/public/${site.slug}/elements/${article.id}?depth=0&r=${unique()}`
            : i % 3 === 1
              ? `/search/sites/${site.slug}?q=title${unique()}`
              : `/${site.slug}/site-statistics/overview`;
        statuses.push((await request(t.app).get(path).set(s.admin.auth)).status);
      }
    });
    await new Promise((resolve) => setTimeout(resolve, 200));
    await pair.stopStandby();
    await new Promise((resolve) => setTimeout(resolve, 500));
    reading = false;
    await Promise.all(readers);
    expect(statuses.length).toBeGreaterThan(4);
    expect(statuses.filter((status) => status !== 200)).toEqual([]);

    await replicaHealth(t, 'down', /unreachable/);
    const title = await retitle(t);
    expect(await titleOf(t)).toBe(title);
    expect(await elementCount(t, s.admin.auth)).toBeGreaterThan(0);

    await pair.startStandby();
    await replicaHealth(t, 'up');
    // Back on the replica: with its replay paused, a change is missing from what anonymous readers get.
    await whilePaused(async () => {
      await retitle(t);
      const served = await pollUntil(
        () => titleOf(t),
        (seen) => seen === title,
        { tries: 100, everyMs: 50 },
      );
      expect(served).toBe(title);
    });
  });

  it('is not a standby: the primary serves every read, and /health says why', async () => {
    const misnamed = await replicaApp({}, pair.primary.urlFor('app'));
    try {
      await replicaHealth(misnamed, 'down', /not a standby/);
      expect(await titleOf(misnamed)).toBe(await titleOf(t, s.editor.auth));
      expect(misnamed.services.replica!.state().reads).toEqual({ replica: 0, primary: 1 });
    } finally {
      await closeServices(misnamed.services);
    }
  });
});
