// A client generated from the OpenAPI document (openapi-typescript types,
// openapi-fetch calls), used as an app's developer would, with no cast: it
// signs in, makes a site, uploads a file as multipart, reads it back, submits
// a job and waits for it with Prefer, and gets typed problems. The project's
// strict typecheck compiles this file, so a document that no longer lets a
// generated client do this fails CI; the types are checked to be current.
import { readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import createClient from 'openapi-fetch';
import { clientTypes, clientTypesFile } from '../../scripts/client-types.ts';
import type { paths } from '../client/api.d.ts';
import { giveCredits } from '../helpers/jobs.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { newTenant, newUser, password } from '../helpers/factories.ts';
import { addMember } from '../../core/tenancy/memberships.ts';

let t: TestApp;
let server: http.Server;
let client: ReturnType<typeof createClient<paths>>;
beforeAll(async () => {
  t = await startTestApp();
  server = http.createServer(t.app);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  client = createClient<paths>({ baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` });
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  await stopTestApp(t);
});

it('is generated from the current document (npm run client writes it)', async () => {
  expect(readFileSync(clientTypesFile, 'utf8')).toBe(await clientTypes());
});

/** The body of a successful answer; a failure ends the test with the problem it got. */
function dataOf<T>(result: { data?: T; error?: { detail?: string }; response: Response }): T {
  if (result.data === undefined) throw new Error(`${result.response.status}: ${result.error?.detail}`);
  return result.data;
}

it('signs in, makes a site, uploads and reads a file, and submits a job, all typed', async () => {
  const owner = await newUser(t);
  const tenant = await newTenant(t);
  await addMember(t.services.db, tenant.id, owner.id, 'admin');

  const signedIn = dataOf(await client.POST('/auth/login', { body: { username: owner.email, password } }));
  const headers = { Authorization: `Bearer ${signedIn.access_token}` };

  const made = await client.POST('/sites/', {
    headers,
    body: { tenant_id: tenant.id, name: 'Typed', slug: `typed-${tenant.id.slice(0, 8)}` },
  });
  expect(made.response.status).toBe(201);
  const created = dataOf(made);
  const slug = created.slug;
  const site = { site_identifier: slug };

  const png = Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==',
    'base64',
  );
  const uploaded = await client.POST('/{site_identifier}/media/', {
    headers,
    params: { path: site },
    body: { file: new Blob([png], { type: 'image/png' }), alt: 'a dot' },
    bodySerializer(body) {
      const form = new FormData();
      form.append('file', body.file, 'dot.png');
      if (body.alt) form.append('alt', body.alt);
      return form;
    },
  });
  expect(uploaded.response.status).toBe(201);
  const item = dataOf(uploaded);
  expect(uploaded.response.headers.get('location')).toBe(`/${slug}/media/${item.id}`);

  const read = await client.GET('/{site_identifier}/media/{media_id}', {
    headers,
    params: { path: { ...site, media_id: item.id } },
  });
  expect(dataOf(read)).toMatchObject({ id: item.id, kind: 'image', mime_type: 'image/png', alt: 'a dot' });

  await giveCredits(t, created, 100, owner.id);
  const spoken = await client.POST('/{site_identifier}/media/tts', {
    headers: { ...headers, Prefer: 'wait=1' },
    params: { path: site },
    body: { text: 'Typed all the way.' },
  });
  expect([200, 202]).toContain(spoken.response.status);
  const job = dataOf(spoken);
  expect(job.kind).toBe('speech');
  expect(spoken.response.headers.get('location')).toBe(`/${slug}/jobs/${job.id}`);

  const missing = await client.GET('/{site_identifier}/media/{media_id}', {
    headers,
    params: { path: { ...site, media_id: '00000000-0000-4000-8000-000000000000' } },
  });
  expect(missing.response.status).toBe(404);
  expect(missing.error).toMatchObject({ status: 404, request_id: missing.response.headers.get('x-request-id') });
});
