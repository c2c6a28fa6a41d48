// What the server requires of a body is in the document too: each body below
// is judged by the documented request schema (ajv, as a client's validator
// would) and by the server, and the two agree — the rules between fields
// ("exactly one of", "needs"), and the e-mail addresses the server takes.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { newSite, newTenant, signedIn, type Caller } from '../helpers/factories.ts';
import { giveCredits } from '../helpers/jobs.ts';
import type { Site } from '../../core/tenancy/sites.ts';

let t: TestApp;
let site: Site;
let editor: Caller;
let document: Record<string, any>;
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats.default(ajv);

beforeAll(async () => {
  t = await startTestApp();
  const tenant = await newTenant(t);
  site = await newSite(t, tenant);
  editor = await signedIn(t, { tenant, role: 'editor', sites: [site] });
  await giveCredits(t, site, 100_000, editor.user.id);
  document = (await request(t.app).get('/openapi.json').expect(200)).body;
  ajv.addSchema(document, 'openapi.json');
});
afterAll(() => stopTestApp(t));

const escape = (text: string) => text.replace(/~/g, '~0').replace(/\//g, '~1');
/** Whether the document's JSON body schema of `POST path` takes `body`. */
const documentTakes = (path: string, body: unknown) =>
  ajv.validate({ $ref: `openapi.json#/paths/${escape(path)}/post/requestBody/content/application~1json/schema` }, body);

const id = '00000000-0000-4000-8000-000000000000';
const hook = 'https://hooks.example.com/jobs';

const cases: [path: string, body: Record<string, unknown>, valid: boolean][] = [
  ['/{site_identifier}/media/generatevideo', { prompt: 'A calm sea.' }, true],
  ['/{site_identifier}/media/generatevideo', { prompt: 'A calm sea.', scenes: [{ narration: 'Waves.' }] }, false],
  ['/{site_identifier}/media/generatevideo', { size: '1280x720' }, false],
  ['/{site_identifier}/media/generatevideo', { scenes: [{ duration_seconds: 2 }] }, false],
  ['/{site_identifier}/media/generatevideo', { prompt: 'Sea.', duration_seconds: 4, seconds_per_scene: 2 }, false],
  ['/{site_identifier}/media/generatevideo', { prompt: 'Sea.', webhook_events: ['start'] }, false],
  ['/{site_identifier}/media/generatevideo', { prompt: 'Sea.', webhook: hook, webhook_events: ['start'] }, true],
  ['/{site_identifier}/media/tts', { text: 'Hello.', webhook_events: ['completed'] }, false],
  ['/{site_identifier}/seo/generatetext', { kind: 'title', text: 'About the sea' }, true],
  ['/{site_identifier}/seo/generatetext', { kind: 'title', text: 'About the sea', post_id: id }, false],
  ['/{site_identifier}/seo/generatetext', { kind: 'title' }, false],
  ['/{site_identifier}/seo/generatetext', { kind: 'alt_text', text: 'A gull' }, false],
  ['/{site_identifier}/seo/generatetext', { kind: 'title', media_id: id }, false],
  ['/{site_identifier}/seo/generatetext', { kind: 'title', text: 'About the sea', apply: true }, false],
  ['/{site_identifier}/seo/analyze', { body: '<p>No title</p>' }, false],
  ['/{site_identifier}/seo/analyze', { title: 'A title' }, true],
  ['/users/', { email: '"a b"@example.com', password: 'long enough password', full_name: 'A' }, false],
  ['/users/', { email: 'ops@[127.0.0.1]', password: 'long enough password', full_name: 'A' }, false],
  ['/users/', { email: 'ops+1@example.com', password: 'long enough password', full_name: 'A' }, true],
];

it.each(cases)('POST %s %j: the document and the server agree (valid: %s)', async (path, body, valid) => {
  expect(documentTakes(path, body)).toBe(valid);
  const admin = path.startsWith('/users') ? await signedIn(t, { globalAdmin: true }) : editor;
  const res = await request(t.app).post(path.replace('{site_identifier}', site.slug)).set(admin.auth).send(body);
  // A body the server takes may still meet another answer (a post that is not there, say): anything but 422.
  if (valid) expect(res.status).not.toBe(422);
  else expect(res.status).toBe(422);
});
