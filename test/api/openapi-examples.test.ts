// The document explains itself by example: every request body has one on each
// of its media types, the main answers (create and read of the core
// resources) too, and each example is valid against its own schema, as a
// client's validator (ajv) reads it. The written ones are what the server takes.
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import request from 'supertest';
import { exampleAnswers } from '../../api/openapi-examples.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { newSite, newTenant, signedIn, type Caller } from '../helpers/factories.ts';
import type { Site } from '../../core/tenancy/sites.ts';

let t: TestApp;
let document: Record<string, any>;
beforeAll(async () => {
  t = await startTestApp();
  document = (await request(t.app).get('/openapi.json').expect(200)).body;
});
afterAll(() => stopTestApp(t));

const escape = (text: string) => text.replace(/~/g, '~0').replace(/\//g, '~1');

type Media = { pointer: string; where: string; media: { schema?: unknown; example?: unknown; examples?: object } };

/** Every media type of every request body and response of the document, with its JSON pointer. */
function mediaOf(doc: Record<string, any>): { requests: Media[]; answers: Media[] } {
  const requests: Media[] = [];
  const answers: Media[] = [];
  for (const [path, item] of Object.entries<any>(doc.paths))
    for (const [method, operation] of Object.entries<any>(item)) {
      const at = `/paths/${escape(path)}/${method}`;
      for (const [type, media] of Object.entries<any>(operation.requestBody?.content ?? {}))
        requests.push({
          pointer: `${at}/requestBody/content/${escape(type)}`,
          where: `${method} ${path} ${type}`,
          media,
        });
      for (const [status, response] of Object.entries<any>(operation.responses))
        for (const [type, media] of Object.entries<any>(response.content ?? {}))
          answers.push({
            pointer: `${at}/responses/${status}/content/${escape(type)}`,
            where: `${method} ${path} ${status} ${type}`,
            media,
          });
    }
  return { requests, answers };
}

const examplesOf = ({ media }: Media): unknown[] =>
  media.example !== undefined
    ? [media.example]
    : Object.values(media.examples ?? {}).map((example: any) => example.value);

/** The request bodies without an example, and every example its schema refuses, with ajv's reasons. */
function problemsOf(doc: Record<string, any>) {
  const validator = new Ajv2020({ strict: false, allErrors: true });
  addFormats.default(validator);
  validator.addSchema(doc, 'doc');
  const { requests, answers } = mediaOf(doc);
  const missing = requests.filter((media) => examplesOf(media).length === 0).map((media) => media.where);
  const invalid = [...requests, ...answers].flatMap((media) =>
    examplesOf(media)
      .filter((example) => !validator.validate({ $ref: `doc#${media.pointer}/schema` }, example))
      .map(() => `${media.where}: ${validator.errorsText(validator.errors)}`),
  );
  return { missing, invalid };
}

it('has an example on every media type of every request body, each valid against its schema', () => {
  const { requests, answers } = mediaOf(document);
  expect(requests.length).toBeGreaterThan(100);
  expect(problemsOf(document)).toEqual({ missing: [], invalid: [] });
  // Answers carry examples too, but only the main ones: the document stays readable.
  const answered = answers.filter((media) => examplesOf(media).length > 0);
  expect(answered.length).toBeGreaterThanOrEqual(exampleAnswers.length);
  expect(answered.length).toBeLessThan(answers.length / 4);
});

it('has an example on the answers of the create and read of each core resource', () => {
  const without = exampleAnswers.filter(([key, status]) => {
    const [method, path] = key.split(' ') as [string, string];
    const response = document.paths[path]?.[method.toLowerCase()]?.responses[status];
    const media = Object.values<any>(response?.content ?? {});
    return media.length === 0 || media.some((one) => one.example === undefined);
  });
  expect(without).toEqual([]);
});

it('would notice an example missing or one its schema refuses', () => {
  const broken = structuredClone(document);
  delete broken.paths['/{site_identifier}/media/tts'].post.requestBody.content['application/json'].example;
  broken.paths['/auth/login'].post.requestBody.content['application/json'].example = { username: 'ada@example.com' };
  broken.paths['/{site_identifier}/jobs/{job_id}'].get.responses['200'].content['application/json'].example.status =
    'sleeping';
  const { missing, invalid } = problemsOf(broken);
  expect(missing).toEqual(['post /{site_identifier}/media/tts application/json']);
  expect(invalid).toEqual([
    expect.stringMatching(/^post \/auth\/login application\/json: .*password/),
    expect.stringMatching(/^get \/\{site_identifier\}\/jobs\/\{job_id\} 200 application\/json: .*status/),
  ]);
});

it('shows the login with the e-mail address as username, and the job a speech request gets', () => {
  const login = document.paths['/auth/login'].post;
  expect(login.requestBody.content['application/x-www-form-urlencoded'].example).toEqual({
    username: 'ada@example.com',
    password: expect.any(String),
  });
  expect(login.responses['200'].content['application/json'].example.token_type).toBe('bearer');
  const speech = document.paths['/{site_identifier}/media/tts'].post;
  expect(speech.requestBody.content['application/json'].example.text).toEqual(expect.any(String));
  expect(speech.responses['202'].content['application/json'].example).toMatchObject({
    kind: 'speech',
    status: 'queued',
  });
});

describe('the written examples of content', () => {
  let site: Site;
  let editor: Caller;
  beforeAll(async () => {
    const tenant = await newTenant(t);
    site = await newSite(t, tenant);
    editor = await signedIn(t, { tenant, role: 'editor', sites: [site] });
  });

  const exampleOf = (path: string) => document.paths[path].post.requestBody.content['application/json'].example;

  // In order: the element is of the type made first.
  it.each([
    '/{site_identifier}/contenttypes/',
    '/{site_identifier}/elements/',
    '/{site_identifier}/pages/',
    '/{site_identifier}/posts/',
  ])('POST %s with its example is a 201', async (path) => {
    const res = await request(t.app)
      .post(path.replace('{site_identifier}', site.slug))
      .set(editor.auth)
      .send(exampleOf(path));
    expect({ status: res.status, detail: res.body.detail }).toEqual({ status: 201, detail: undefined });
  });
});
