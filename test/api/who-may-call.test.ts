// Who may call an operation, told before and after: the document says it for
// every operation (a line of its description and `x-access`, from the route's
// own declaration), and a 403 names every permission the caller lacks at once.
import request from 'supertest';
import { allRoutes } from '../../api/all-routes.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { newSite, newTenant, serviceAccount, signedIn, type Caller } from '../helpers/factories.ts';
import { bearer } from '../helpers/identity.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import type { Tenant } from '../../core/tenancy/tenants.ts';

let t: TestApp;
let tenant: Tenant;
let site: Site;
let admin: Caller;
let document: Record<string, any>;

beforeAll(async () => {
  t = await startTestApp();
  tenant = await newTenant(t);
  site = await newSite(t, tenant);
  admin = await signedIn(t, { tenant, role: 'admin' });
  document = (await request(t.app).get('/openapi.json').expect(200)).body;
});
afterAll(() => stopTestApp(t));

const operations = () =>
  Object.entries(document.paths).flatMap(([path, item]: [string, any]) =>
    Object.entries(item).map(([method, operation]: [string, any]) => ({
      key: `${method.toUpperCase()} ${path}`,
      operation,
    })),
  );

describe('the document', () => {
  it('says who may call every operation, in its description and in x-access', () => {
    const without = operations()
      .filter(({ operation }) => !operation.description?.includes('Who may call: ') || !operation['x-access'])
      .map(({ key }) => key);
    expect(without).toEqual([]);
    expect(operations().length).toBeGreaterThan(200);
  });

  it('says what each route declares, the scopes a service account needs among them', () => {
    const speech = document.paths['/{site_identifier}/media/tts'].post;
    expect(allRoutes.find((route) => route.key === 'POST /{site_identifier}/media/tts')!.access).toEqual({
      site: 'write',
      scope: ['jobs:write', 'media:write'],
    });
    expect(speech['x-access']).toEqual({
      declared: 'site',
      site_role: 'write',
      service_accounts: true,
      scopes: ['sites:read', 'jobs:write', 'media:write'],
    });
    expect(speech.description).toContain(
      'Who may call: administrators of the site’s tenant, and its editors and authors assigned to the site; ' +
        'global administrators; service accounts of that tenant with `sites:read`, `jobs:write` and `media:write`',
    );
    expect(document.paths['/{site_identifier}/contenttypes/'].post['x-access']).toMatchObject({
      site_role: 'manage',
      scopes: ['sites:read', 'content:write'],
    });
    expect(document.paths['/health'].get['x-access']).toEqual({
      declared: 'public',
      service_accounts: false,
      scopes: [],
    });
    expect(document.paths['/health'].get.description).toContain('Who may call: anyone, without a token.');
    const userOnly = document.paths['/auth/currentuser'].get;
    expect(userOnly['x-access']).toMatchObject({ declared: 'user', service_accounts: false });
    expect(userOnly.description).toContain('not service accounts or API keys');
  });

  it('follows each route’s declaration', () => {
    for (const route of allRoutes) {
      const [method, path] = route.key.split(' ') as [string, string];
      const operation =
        document.paths[path]?.[method.toLowerCase()] ?? document.paths[path.replace(/\/$/, '')]?.[method.toLowerCase()];
      if (!operation) continue;
      const access = operation['x-access'];
      if (typeof route.access === 'object') {
        expect({ key: route.key, role: access.site_role }).toEqual({ key: route.key, role: route.access.site });
        expect(access.scopes).toEqual(
          route.access.site === 'admin' ? [] : ['sites:read', ...[route.access.scope ?? []].flat()],
        );
      } else expect({ key: route.key, declared: access.declared }).toEqual({ key: route.key, declared: route.access });
    }
  });

  it('documents missing_permissions on the problem body and the 403', () => {
    expect(document.components.schemas.Problem.properties.missing_permissions).toMatchObject({ type: 'array' });
    expect(document.components.responses.Forbidden.description).toContain('missing_permissions');
  });
});

describe('a 403', () => {
  const speech = (auth: { Authorization: string }) =>
    request(t.app).post(`/${site.slug}/media/tts`).set(auth).send({ text: 'All at once.' });

  it('names every scope a service account lacks for the route, at once', async () => {
    const bot = await serviceAccount(t, tenant, ['search:read'], admin);
    const res = await speech(bot.auth).expect(403);
    expect(res.body.missing_permissions).toEqual(['sites:read', 'jobs:write', 'media:write']);
    expect(res.body.detail).toBe('The service account lacks the sites:read, jobs:write and media:write scopes.');
  });

  it('names only the one it lacks when it holds the others', async () => {
    const bot = await serviceAccount(t, tenant, ['sites:read', 'jobs:write'], admin);
    const res = await speech(bot.auth).expect(403);
    expect(res.body.missing_permissions).toEqual(['media:write']);
    expect(res.body.detail).toBe('The service account lacks the media:write scope.');
  });

  it('names every scope a member’s API key lacks', async () => {
    const editor = await signedIn(t, { tenant, role: 'editor', sites: [site] });
    const made = await request(t.app)
      .post(`/api/tenants/${tenant.id}/api-keys`)
      .set(admin.auth)
      .send({ name: 'narrow', user_id: editor.user.id, scopes: ['sites:read', 'media:read'] })
      .expect(201);
    const res = await speech(bearer(made.body.key)).expect(403);
    expect(res.body.missing_permissions).toEqual(['jobs:write', 'media:write']);
    expect(res.body.detail).toBe('The API key lacks the jobs:write and media:write scopes.');
  });

  it('names none for a role too low, which no scope mends', async () => {
    const author = await signedIn(t, { tenant, role: 'author', sites: [site] });
    const res = await request(t.app)
      .post(`/${site.slug}/contenttypes/`)
      .set(author.auth)
      .send({ name: 'Recipe', api_id: 'recipe', fields: [] })
      .expect(403);
    expect(res.body.missing_permissions).toBeUndefined();
  });
});
