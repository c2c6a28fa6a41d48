// Content webhooks delivered, through HTTP against PostgreSQL with a running
// worker: a receiver on 127.0.0.1 subscribed to a tenant's content events
// hears an element published, edited (a draft saved beside it is not heard;
// its publication is), a subtree of 500 pages moved (one page.moved per
// page, with its new path), the element unpublished and deleted: each
// change once, in order per item, every delivery verified with the
// `standardwebhooks` package and checked against /openapi.json's `webhooks`.
// Also: a delivery retried holds back the item's later ones; a tenant with
// no subscription records no event; a site's subscription hears only that
// site, and only the events it names; a rotated secret's grace period signs
// content deliveries with both.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import request from 'supertest';
import { Webhook } from 'standardwebhooks';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { removeExpiredRows } from '../../../core/cleanup.ts';
import { createLogger } from '../../../core/logger.ts';
import { fanOut } from '../../../core/webhooks/content-events.ts';
import { retryStrandedDeliveries } from '../../../core/webhooks/stranded.ts';
import { createType } from '../../helpers/content.ts';
import { newSite, newTenant } from '../../helpers/factories.ts';
import { staffedTenant, unique, type Staffed } from '../../helpers/identity.ts';
import { jobsSuite, startTestWorker } from '../../helpers/jobs.ts';
import { pollUntil } from '../../helpers/poll.ts';
import { receiverEnv, startReceiver, type Received, type Receiver } from '../../helpers/webhook-receiver.ts';

// Two retries a second apart: three attempts in all, each of at most 3 s.
const env = receiverEnv;
const suite = jobsSuite(env);
let receiver: Receiver;
beforeAll(async () => {
  receiver = await startReceiver();
});
afterAll(() => receiver.close());

const worker = async () => (suite.worker = await startTestWorker(suite.t, env));

type Event = {
  type: string;
  timestamp: string;
  data: { id: string; path?: string; previous_path?: string | null; paths: string[]; surrogate_keys: string[] };
};

const hook = () => {
  const path = `/content/${unique()}`;
  return { path, url: `${receiver.url}${path}` };
};

async function subscribe(staffed: Staffed, body: Record<string, unknown>) {
  const res = await request(suite.t.app)
    .post(`/api/tenants/${staffed.tenant.id}/content-webhooks`)
    .set(staffed.admin.auth)
    .send(body);
  expect(res.status).toBe(201);
  return res.body as { id: string };
}

const secretOf = async (staffed: Staffed) =>
  (
    await request(suite.t.app)
      .get(`/api/tenants/${staffed.tenant.id}/webhook-secret`)
      .set(staffed.admin.auth)
      .expect(200)
  ).body.secret as string;

const verified = (secret: string, delivery: Received) =>
  new Webhook(secret).verify(delivery.body, delivery.headers) as Event;

/** Waits until `path` has heard deliveries for which `done` holds. */
const hear = (path: string, done: (heard: Received[]) => boolean) =>
  pollUntil(async () => receiver.at(path), done, { tries: 1200, everyMs: 50 });

/** How many of `heard` are of `type` (the body begins with it: cheap enough to ask every 50 ms of a thousand). */
const countOf = (heard: Received[], type: string) =>
  heard.filter((delivery) => delivery.body.startsWith(`{"type":"${type}"`)).length;

/** `count` published pages under `parent`, in one statement (as a bulk import would write them). */
async function bulkPages(staffed: Staffed, parent: { id: string; path: string }, count: number) {
  await suite.t.services.db.query(sql.typeAlias('void')`
    insert into pages (tenant_id, site_id, parent_id, position, slug, path, title, locale, status, published_at)
    select ${staffed.tenant.id}, ${staffed.site.id}, ${parent.id}, n - 1, 'p' || n, ${parent.path} || '/p' || n,
           'Page ' || n, ${staffed.site.default_locale}, 'published', now()
    from generate_series(1, ${count}) n`);
}

const site = (staffed: Staffed) => `/${staffed.site.slug}`;

/** Checks one delivery of each type heard against the body /openapi.json's `webhooks` documents for it. */
async function expectDocumented(heard: Received[]) {
  const document = (await request(suite.t.app).get('/openapi.json').expect(200)).body;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(ajv);
  ajv.addSchema(document, 'doc');
  const types = new Set<string>();
  for (const delivery of heard) {
    const event = JSON.parse(delivery.body) as Event;
    if (types.has(event.type)) continue;
    types.add(event.type);
    const pointer = `doc#/webhooks/${event.type}/post/requestBody/content/application~1json/schema`;
    if (!ajv.validate({ $ref: pointer }, event)) throw new Error(`${event.type}: ${ajv.errorsText(ajv.errors)}`);
  }
  return types;
}

async function newPage(staffed: Staffed, body: Record<string, unknown>) {
  const res = await request(suite.t.app)
    .post(`${site(staffed)}/pages/`)
    .set(staffed.admin.auth)
    .send({ status: 'published', ...body });
  expect(res.status).toBe(201);
  return res.body as { id: string; path: string };
}

it('hears a publish, an edit, a move of 500 pages, an unpublish and a delete, each once and in order per item', async () => {
  const { a } = suite;
  await worker();
  const { path, url } = hook();
  const subscription = await subscribe(a, {
    url,
    events: [
      'element.published',
      'element.unpublished',
      'element.deleted',
      'page.published',
      'page.moved',
      'page.unpublished',
      'page.deleted',
    ],
  });
  const secret = await secretOf(a);
  const app = suite.t.app;
  const auth = a.admin.auth;

  // Two published pages: one to move (with 499 below it), one to move it under, which places the element.
  const docs = await newPage(a, { slug: 'docs', title: 'Docs' });
  const archive = await newPage(a, { slug: 'archive', title: 'Archive' });
  await bulkPages(a, docs, 499);

  const type = await createType(suite.t, auth, a.site, { fields: [{ id: 'title', label: 'Title', type: 'text' }] });
  const created = await request(app)
    .post(`${site(a)}/elements/`)
    .set(auth)
    .send({ type_id: type.id, name: 'Hero', data: { title: 'First' }, status: 'published' });
  expect(created.status).toBe(201);
  const element = created.body as { id: string };
  await request(app)
    .post(`${site(a)}/pages/${archive.id}/elements`)
    .set(auth)
    .send({ element_id: element.id })
    .expect(201);
  // A draft saved beside the live version changes nothing public: no event.
  await request(app)
    .patch(`${site(a)}/elements/${element.id}`)
    .set(auth)
    .send({ data: { title: 'Draft' } })
    .expect(200);
  await request(app)
    .patch(`${site(a)}/elements/${element.id}`)
    .set(auth)
    .send({ data: { title: 'Second' }, status: 'published' })
    .expect(200);

  // What came before the move is heard first, so that the time measured is the move's alone.
  await hear(path, (heard) => countOf(heard, 'page.published') >= 501 && countOf(heard, 'element.published') >= 2);
  const movedAt = performance.now();
  const moved = await request(app)
    .put(`${site(a)}/pages/${docs.id}/move`)
    .set(auth)
    .send({ parent_id: archive.id });
  expect(moved.status).toBe(200);
  const moveRequestMs = Math.round(performance.now() - movedAt);
  const heardMoves = await hear(path, (heard) => countOf(heard, 'page.moved') >= 500);
  const moveMs = Math.round(performance.now() - movedAt);

  await request(app)
    .patch(`${site(a)}/elements/${element.id}`)
    .set(auth)
    .send({ status: 'draft' })
    .expect(200);
  await request(app)
    .delete(`${site(a)}/elements/${element.id}/force`)
    .set(auth)
    .expect(204);

  const heard = await hear(path, (all) => countOf(all, 'element.deleted') >= 1);
  // Give anything that would arrive twice the time to.
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const all = receiver.at(path);

  // Every delivery verifies, and each webhook-id arrives once.
  const events = all.map((delivery) => ({ id: delivery.headers['webhook-id']!, event: verified(secret, delivery) }));
  expect(new Set(events.map((item) => item.id)).size).toBe(events.length);

  // Each item's changes, in the order they arrived.
  const byItem = new Map<string, string[]>();
  for (const { event } of events) byItem.set(event.data.id, [...(byItem.get(event.data.id) ?? []), event.type]);
  expect(byItem.get(element.id)).toEqual([
    'element.published',
    'element.published',
    'element.unpublished',
    'element.deleted',
  ]);
  expect(byItem.get(docs.id)).toEqual(['page.published', 'page.moved']);
  // Published, then published anew when the element was placed on it and when it was taken away.
  expect(byItem.get(archive.id)).toEqual(['page.published', 'page.published', 'page.published']);
  const pages = [...byItem].filter(([id]) => id !== element.id && id !== docs.id && id !== archive.id);
  expect(pages).toHaveLength(499);
  for (const [, types] of pages) expect(types).toEqual(['page.published', 'page.moved']);
  expect(events).toHaveLength(4 + 2 + 3 + 499 * 2);

  // One page.moved per page of the subtree, with its new path and the one it left.
  const moves = events.filter(({ event }) => event.type === 'page.moved').map(({ event }) => event.data);
  expect(moves).toHaveLength(500);
  expect(new Set(moves.map((data) => data.id)).size).toBe(500);
  for (const data of moves) {
    expect(data.path).toBe(`/archive${data.previous_path}`);
    expect(data.paths).toEqual([data.previous_path, data.path]);
    expect(data.surrogate_keys).toContain(`page:${data.id}`);
  }
  expect(moves.map((data) => data.path)).toContain('/archive/docs/p499');

  // The element's events say where it is shown and which tags to purge.
  const [first, second] = events.filter(({ event }) => event.type === 'element.published').map(({ event }) => event);
  expect(first!.data).toMatchObject({ paths: [], surrogate_keys: expect.arrayContaining([`element:${element.id}`]) });
  expect(second!.data).toMatchObject({ name: 'Hero', paths: ['/archive'] });

  // Each body is the one /openapi.json documents for its type.
  await expectDocumented(all);

  // The log lists them, delivered at the first attempt.
  const log = await request(app)
    .get(`/api/tenants/${a.tenant.id}/content-webhooks/${subscription.id}/deliveries`)
    .query({ limit: 5, include_total: 'true' })
    .set(auth)
    .expect(200);
  expect(log.body.total).toBe(events.length);
  expect(log.body.items[0]).toMatchObject({ status: 'succeeded', attempts: [{ attempt: 1, response_status: 200 }] });

  console.log(
    `content webhooks figure: ${moves.length} page.moved events for a 500-page move (the move's request took ` +
      `${moveRequestMs} ms, the triggers' events included), all delivered ${moveMs} ms after ` +
      `the move was asked (${countOf(heardMoves, 'page.moved')} heard by then); ${events.length} deliveries in all, each once`,
  );
  expect(heard.length).toBeGreaterThan(0);
  await request(app)
    .patch(`/api/tenants/${a.tenant.id}/content-webhooks/${subscription.id}`)
    .set(auth)
    .send({ enabled: false })
    .expect(200);
  // A loaded machine can take longer than Jest's minute.
}, 180_000);

it('holds back an item’s later delivery while an earlier one is retried', async () => {
  const { b } = suite;
  await worker();
  const { path, url } = hook();
  await subscribe(b, { url, events: ['page.published', 'page.unpublished'] });
  // The first delivery fails once and is retried a second later; the unpublish waits for it.
  receiver.answer(path, 500);
  const page = await newPage(b, { slug: `held-${unique()}`, title: 'Held' });
  await hear(path, (heard) => heard.length >= 1);
  await request(suite.t.app)
    .patch(`${site(b)}/pages/${page.id}`)
    .set(b.admin.auth)
    .send({ status: 'draft' })
    .expect(200);
  const heard = await hear(path, (all) => all.length >= 3);
  await new Promise((resolve) => setTimeout(resolve, 500));
  const types = receiver.at(path).map((delivery) => (JSON.parse(delivery.body) as Event).type);
  expect(types).toEqual(['page.published', 'page.published', 'page.unpublished']);
  expect(heard[0]!.headers['webhook-id']).toBe(heard[1]!.headers['webhook-id']);
});

it('records no event for a tenant without a subscription, and one per item and change for a tenant with one', async () => {
  const { t, b } = suite;
  const quiet = await newTenant(t);
  const quietSite = await newSite(t, quiet);
  const eventsOf = (tenantId: string) =>
    t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from content_events where tenant_id = ${tenantId}`);
  const insertPage = (tenantId: string, siteId: string, slug: string) =>
    t.services.db.query(sql.typeAlias('void')`
      insert into pages (tenant_id, site_id, position, slug, path, title, locale, status, published_at)
      values (${tenantId}, ${siteId}, 900 + ${Math.floor(Math.random() * 1000)}, ${slug}, ${`/${slug}`}, 'Quiet', 'en',
              'published', now())`);
  await insertPage(quiet.id, quietSite.id, `quiet-${unique()}`);
  expect(await eventsOf(quiet.id)).toBe(0);

  // No worker runs: b's events stay until a fan-out takes them. A row changed twice in one transaction is one event.
  const before = await eventsOf(b.tenant.id);
  const slug = `twice-${unique()}`;
  await t.services.db.transaction(async (tx) => {
    await tx.query(sql.typeAlias('void')`
      insert into pages (tenant_id, site_id, position, slug, path, title, locale, status, published_at)
      values (${b.tenant.id}, ${b.site.id}, 800, ${slug}, ${`/${slug}`}, 'Twice', 'en', 'published', now())`);
    await tx.query(
      sql.typeAlias('void')`update pages set title = 'Twice, retitled' where slug = ${slug} and site_id = ${b.site.id}`,
    );
    await tx.query(
      sql.typeAlias('void')`update pages set title = 'Twice, again' where slug = ${slug} and site_id = ${b.site.id}`,
    );
  });
  expect(await eventsOf(b.tenant.id)).toBe(before + 1);
  const [data] = await t.services.db.anyFirst(sql.type(z.object({ data: z.record(z.string(), z.unknown()) }))`
    select data from content_events where tenant_id = ${b.tenant.id} order by id desc limit 1`);
  expect(data).toMatchObject({ title: 'Twice, again', status: 'published' });

  // A change nothing public shows (a touch of updated_at) is no event; one that is, is.
  const typesSince = async (id: number) =>
    t.services.db.anyFirst(sql.type(z.object({ type: z.string() }))`
      select type from content_events where tenant_id = ${b.tenant.id} and id > ${id} order by id`);
  const last = await t.services.db.oneFirst(sql.type(z.object({ id: z.number() }))`
    select coalesce(max(id), 0)::int as id from content_events`);
  const media = await t.services.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into media_items (tenant_id, site_id, kind, mime_type, storage_key, status)
    values (${b.tenant.id}, ${b.site.id}, 'image', 'image/png', ${`${b.tenant.id}/${unique()}.png`}, 'ready')
    returning id`);
  await t.services.db.query(sql.typeAlias('void')`update media_items set alt = 'A cat' where id = ${media}`);
  await t.services.db.query(sql.typeAlias('void')`update media_items set updated_at = now() where id = ${media}`);
  const post = await t.services.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into posts (tenant_id, site_id, title, slug, locale, status, published_at)
    values (${b.tenant.id}, ${b.site.id}, 'Post', ${`post-${unique()}`}, 'en', 'published', now()) returning id`);
  await t.services.db.query(sql.typeAlias('void')`update posts set body = 'Edited' where id = ${post}`);
  await t.services.db.query(sql.typeAlias('void')`update posts set updated_at = now() where id = ${post}`);
  await t.services.db.query(sql.typeAlias('void')`delete from posts where id = ${post}`);
  expect(await typesSince(last)).toEqual([
    'media.created',
    'media.updated',
    'post.published',
    'post.published',
    'post.deleted',
  ]);
});

it('sends post and media events in the shape the document gives them', async () => {
  const { t, b } = suite;
  await worker();
  const { path, url } = hook();
  await subscribe(b, {
    url,
    events: ['post.published', 'post.unpublished', 'post.deleted', 'media.created', 'media.updated', 'media.deleted'],
  });
  const post = await request(t.app)
    .post(`${site(b)}/posts/`)
    .set(b.admin.auth)
    .send({ title: 'Documented', status: 'published' })
    .expect(201);
  await request(t.app)
    .patch(`${site(b)}/posts/${post.body.id}`)
    .set(b.admin.auth)
    .send({ status: 'draft' })
    .expect(200);
  await request(t.app)
    .delete(`${site(b)}/posts/${post.body.id}`)
    .set(b.admin.auth)
    .expect(204);
  const media = await t.services.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into media_items (tenant_id, site_id, kind, mime_type, storage_key, status)
    values (${b.tenant.id}, ${b.site.id}, 'image', 'image/png', ${`${b.tenant.id}/${unique()}.png`}, 'ready')
    returning id`);
  await t.services.db.query(sql.typeAlias('void')`update media_items set alt = 'Documented' where id = ${media}`);
  await t.services.db.query(sql.typeAlias('void')`delete from media_items where id = ${media}`);
  const heard = await hear(path, (deliveries) => deliveries.length >= 6);
  expect(await expectDocumented(heard)).toEqual(
    new Set(['post.published', 'post.unpublished', 'post.deleted', 'media.created', 'media.updated', 'media.deleted']),
  );
  const published = heard
    .map((delivery) => JSON.parse(delivery.body) as Event)
    .find((e) => e.type === 'post.published');
  expect(published!.data.surrogate_keys).toEqual(expect.arrayContaining([expect.stringContaining(post.body.id)]));
});

it('hears only its site’s events, and only those it names', async () => {
  const { t, a } = suite;
  const other = await newSite(t, a.tenant);
  await worker();
  const { path, url } = hook();
  await subscribe(a, { url, events: ['page.published'], site_id: other.id });
  const otherSite = { ...a, site: other };
  const mine = await newPage(otherSite, { slug: `mine-${unique()}`, title: 'Mine' });
  await newPage(a, { slug: `not-mine-${unique()}`, title: 'Not mine' });
  await request(t.app).delete(`/${other.slug}/pages/${mine.id}`).set(a.admin.auth).expect(204);
  const fence = await newPage(otherSite, { slug: `fence-${unique()}`, title: 'Fence' });
  await hear(path, (heard) => heard.some((delivery) => delivery.body.includes(fence.id)));
  await new Promise((resolve) => setTimeout(resolve, 500));
  const heard = receiver.at(path).map((delivery) => JSON.parse(delivery.body) as Event);
  // Two items: each heard once, in whichever order (an item's own events keep theirs).
  expect(heard.map((event) => [event.type, event.data.id]).sort()).toEqual(
    [
      ['page.published', mine.id],
      ['page.published', fence.id],
    ].sort(),
  );
});

it('signs with both secrets during a rotation’s grace period', async () => {
  const { t, b } = suite;
  await worker();
  const { path, url } = hook();
  await subscribe(b, { url, events: ['media.created'] });
  const old = await secretOf(b);
  const rotated = await request(t.app)
    .post(`/api/tenants/${b.tenant.id}/webhook-secret/rotate`)
    .set(b.admin.auth)
    .send({ grace_period_seconds: 3600 })
    .expect(200);
  const media = await t.services.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into media_items (tenant_id, site_id, kind, mime_type, storage_key, status)
    values (${b.tenant.id}, ${b.site.id}, 'image', 'image/png', ${`${b.tenant.id}/${unique()}.png`}, 'ready')
    returning id`);
  const [delivery] = await hear(path, (heard) => heard.length >= 1);
  expect(delivery!.headers['webhook-signature']!.split(' ')).toHaveLength(2);
  for (const secret of [old, rotated.body.secret as string]) {
    expect(verified(secret, delivery!)).toMatchObject({
      type: 'media.created',
      data: { id: media, site_id: b.site.id, surrogate_keys: [`media:${media}`] },
    });
  }
});

it('forgets deliveries that ended more than JOB_RETENTION_DAYS ago, in the hourly cleanup', async () => {
  const { t, b } = suite;
  await worker();
  const { path, url } = hook();
  const subscription = await subscribe(b, { url, events: ['page.published'] });
  const old = await t.services.db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
    insert into job_webhooks (tenant_id, subscription_id, event_id, item_id, event, url, payload, occurred_at, status,
                              attempts, created_at, finished_at)
    values (${b.tenant.id}, ${subscription.id}, 1, gen_random_uuid(), 'page.published', ${url}, '{}',
            now() - interval '40 days', 'succeeded', 1, now() - interval '40 days', now() - interval '40 days')
    returning id`);
  const page = await newPage(b, { slug: `recent-${unique()}`, title: 'Recent' });
  await hear(path, (heard) => heard.some((delivery) => delivery.body.includes(page.id)));
  const removed = await removeExpiredRows(t.services.db, t.services.config);
  expect(removed.content_deliveries).toBeGreaterThanOrEqual(1);
  const left = await t.services.db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
    select id from job_webhooks where subscription_id = ${subscription.id} order by created_at`);
  expect(left).toHaveLength(1);
  expect(left).not.toContain(old);
});

it('leaves a delivery to its tenant’s run while the run can still come, and sweeps it up when the run gave up', async () => {
  const { t } = suite;
  const c = await staffedTenant(t);
  const { path, url } = hook();
  await subscribe(c, { url, events: ['page.published'] });
  // No worker yet: the event waits with its run's queue entry; the delivery is made as the run would make it.
  const page = await newPage(c, { slug: `swept-${unique()}`, title: 'Swept' });
  expect(await fanOut(t.services.db, c.tenant.id)).toBe(1);
  const { db } = t.services;
  await db.query(sql.typeAlias('void')`
    update job_webhooks set created_at = now() - interval '5 minutes' where tenant_id = ${c.tenant.id}`);
  const sweep = () => retryStrandedDeliveries(db, t.config, createLogger('silent'));
  const attemptsOf = () =>
    db.anyFirst(sql.type(z.object({ error: z.object({ code: z.string() }).nullable() }))`
      select a.error from job_webhook_attempts a join job_webhooks d on d.id = a.webhook_id
      where d.tenant_id = ${c.tenant.id} order by a.attempt`);
  await sweep();
  expect(await attemptsOf()).toEqual([]);

  // The run's entry gave up (its task failed each time): the delivery counts a try that sent nothing, and is sent again.
  await db.query(sql.typeAlias('void')`
    update graphile_worker._private_jobs set attempts = max_attempts, last_error = 'the database was away'
    where key = ${`content-events:${c.tenant.id}`}`);
  await sweep();
  expect(await attemptsOf()).toEqual([{ code: 'not_sent' }]);
  await worker();
  const [delivery] = await hear(path, (heard) => heard.length >= 1);
  expect(JSON.parse(delivery!.body)).toMatchObject({ type: 'page.published', data: { id: page.id } });
});
