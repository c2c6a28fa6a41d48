// Helpers for the identity and tenancy route tests: a tenant with its staff,
// and one check of the shared keyset pagination for any list endpoint.
import { randomBytes } from 'node:crypto';
import request from 'supertest';
import type { Tenant } from '../../core/tenancy/tenants.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import type { TestApp } from './app.ts';
import { newSite, newTenant, serviceAccount, signedIn, type Caller } from './factories.ts';

export type Auth = { Authorization: string };

/** A short random marker for names, slugs and searches. */
export const unique = () => randomBytes(4).toString('hex');

export const bearer = (token: string): Auth => ({ Authorization: `Bearer ${token}` });

/** A signed-in global administrator. */
export const globalAdmin = (t: TestApp) => signedIn(t, { globalAdmin: true });

export type Staffed = { tenant: Tenant; site: Site; admin: Caller; editor: Caller; author: Caller };

/** A tenant with one site, its admin, an editor assigned to the site and an author assigned to nothing. */
export async function staffedTenant(t: TestApp, name?: string): Promise<Staffed> {
  const tenant = await newTenant(t, name);
  const site = await newSite(t, tenant);
  const admin = await signedIn(t, { tenant, role: 'admin' });
  const editor = await signedIn(t, { tenant, role: 'editor', sites: [site] });
  const author = await signedIn(t, { tenant, role: 'author' });
  return { tenant, site, admin, editor, author };
}

const withQuery = (path: string, query: string) => `${path}${path.includes('?') ? '&' : '?'}${query}`;

/**
 * Checks a list endpoint's pagination: walking it one item at a time with
 * next_cursor yields exactly the full list, in order, each item once;
 * include_total=true counts it; a garbage cursor is a 400. Answers the ids.
 */
export async function expectPaginates(t: TestApp, auth: Auth, path: string): Promise<string[]> {
  const full = await request(t.app).get(withQuery(path, 'limit=200')).set(auth).expect(200);
  expect(full.body.next_cursor).toBeNull();
  expect(full.body).not.toHaveProperty('total');
  const all: string[] = full.body.items.map((item: { id: string }) => item.id);
  expect(all.length).toBeGreaterThanOrEqual(2);

  const walked: string[] = [];
  let cursor: string | null = null;
  do {
    const page: request.Response = await request(t.app)
      .get(withQuery(path, `limit=1${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`))
      .set(auth)
      .expect(200);
    expect(page.body.items).toHaveLength(1);
    walked.push(page.body.items[0].id);
    cursor = page.body.next_cursor;
    expect(walked.length).toBeLessThanOrEqual(all.length);
  } while (cursor);
  expect(walked).toEqual(all);

  const counted = await request(t.app).get(withQuery(path, 'limit=1&include_total=true')).set(auth).expect(200);
  expect(counted.body.total).toBe(all.length);
  expect(counted.body.items).toHaveLength(1);

  const garbage = await request(t.app).get(withQuery(path, 'cursor=not-a-cursor')).set(auth).expect(400);
  expect(garbage.headers['content-type']).toMatch(/problem\+json/);
  await request(t.app).get(withQuery(path, 'limit=0')).set(auth).expect(422);
  return all;
}

/** The ids of the items of a list answer. */
export const idsOf = (body: { items: { id: string }[] }) => body.items.map((item) => item.id);

/**
 * The cast of an area's test files (media, content): tenants A and B
 * (staffed), a global admin, two authors assigned to A's site, and service
 * accounts of A that read the area, write it, or have no scope of it.
 */
export type AreaCast = {
  a: Staffed;
  b: Staffed;
  admin: Caller;
  author: Caller;
  otherAuthor: Caller;
  reader: Auth;
  writer: Auth;
  noScope: Auth;
};

export async function areaCast(t: TestApp, area: 'media' | 'content'): Promise<AreaCast> {
  const a = await staffedTenant(t);
  const b = await staffedTenant(t);
  const account = async (scopes: string[]) => (await serviceAccount(t, a.tenant, scopes, a.admin)).auth;
  return {
    a,
    b,
    admin: await globalAdmin(t),
    author: await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] }),
    otherAuthor: await signedIn(t, { tenant: a.tenant, role: 'author', sites: [a.site] }),
    reader: await account(['sites:read', `${area}:read`]),
    writer: await account(['sites:read', `${area}:read`, `${area}:write`]),
    noScope: await account(['sites:read']),
  };
}
