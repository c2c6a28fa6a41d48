// Swagger UI's "Authorize" gets its token itself: the document names the
// login as an OAuth 2.0 password flow and /auth/token as a client-credentials
// flow, and both answer the requests Swagger UI sends (form-encoded, an empty
// `scope`, client credentials as HTTP Basic, which is its default).
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { newTenant, newUser, password, serviceAccount } from '../../helpers/factories.ts';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => stopTestApp(t));

const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;

it('offers a password and a client-credentials flow beside the bearer, on every secured operation', async () => {
  const { body: document } = await request(t.app).get('/openapi.json').expect(200);
  expect(document.components.securitySchemes.oauth2).toMatchObject({
    type: 'oauth2',
    flows: {
      password: { tokenUrl: '/auth/login', scopes: {} },
      clientCredentials: { tokenUrl: '/auth/token', scopes: { 'content:write': expect.any(String) } },
    },
  });
  expect(document.paths['/auth/currentuser'].get.security).toEqual([{ bearerAuth: [] }, { oauth2: [] }]);
});

it('signs in with a password as Swagger UI asks, and the token works', async () => {
  const user = await newUser(t);
  const res = await request(t.app)
    .post('/auth/login')
    .type('form')
    // No client id typed in: Swagger UI still sends the Basic header, of an empty id and secret.
    .set('Authorization', basic('', ''))
    .send(
      `grant_type=password&scope=&username=${encodeURIComponent(user.email)}&password=${encodeURIComponent(password)}`,
    )
    .expect(200);
  expect(res.body).toMatchObject({ token_type: 'bearer', access_token: expect.any(String) });
  const me = await request(t.app).get('/auth/currentuser').set('Authorization', `Bearer ${res.body.access_token}`);
  expect(me.status).toBe(200);
  expect(me.body.email).toBe(user.email);
});

it('signs in a service account with client credentials as Swagger UI asks, in the header or the body', async () => {
  const { account } = await serviceAccount(t, await newTenant(t), ['content:read', 'sites:read']);
  const inHeader = await request(t.app)
    .post('/auth/token')
    .type('form')
    .set('Authorization', basic(account.client_id, account.client_secret))
    .send('grant_type=client_credentials&scope=')
    .expect(200);
  expect(inHeader.body.scope).toBe('content:read sites:read');
  const inBody = await request(t.app)
    .post('/auth/token')
    .type('form')
    .send(
      `grant_type=client_credentials&scope=content%3Aread&client_id=${account.client_id}&client_secret=${encodeURIComponent(account.client_secret)}`,
    )
    .expect(200);
  expect(inBody.body.scope).toBe('content:read');
  await request(t.app).get('/auth/token-info').set('Authorization', `Bearer ${inBody.body.access_token}`).expect(200);
});
