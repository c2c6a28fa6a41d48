// A problem's `type` link leads to a page explaining it: every type the code
// can answer with (found in the source, as a newcomer would grep for it) has
// one, and no page is left for a type nothing emits.
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import request from 'supertest';
import { problemPages } from '../../api/problems/catalog.ts';
import { statusProblems } from '../../core/errors.ts';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';

const root = path.join(import.meta.dirname, '..', '..');

/** The problem types the source names: `problemType('x')`, a literal `/problems/x`, a fetch failure's code. */
function emittedTypes(): Set<string> {
  const names = new Set<string>(['error', ...Object.values(statusProblems).map(([slug]) => slug)]);
  const patterns = [
    /problemType\('([a-z0-9-]+)'\)/g,
    /(?<![\w.])\/problems\/([a-z0-9-]+)(?![\w.-])/g,
    /SafeFetchError\('([a-z0-9-]+)'/g,
  ];
  for (const folder of ['api', 'core', 'worker']) {
    for (const file of readdirSync(path.join(root, folder), { recursive: true, encoding: 'utf8' })) {
      // Not the catalogue itself; mentions of its files (api/problems/pages.ts) are no types either.
      if (!file.endsWith('.ts') || file === path.join('problems', 'catalog.ts')) continue;
      const text = readFileSync(path.join(root, folder, file), 'utf8');
      for (const pattern of patterns) for (const match of text.matchAll(pattern)) names.add(match[1]!);
    }
  }
  return names;
}

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => stopTestApp(t));

it('explains every problem type the code can answer with, and only those', () => {
  const emitted = emittedTypes();
  const missing = [...emitted].filter((name) => !problemPages.has(name));
  expect({ 'add these to api/problems/catalog.ts': missing }).toEqual({ 'add these to api/problems/catalog.ts': [] });
  const stale = [...problemPages.keys()].filter((name) => !emitted.has(name));
  expect({ 'nothing emits these any more': stale }).toEqual({ 'nothing emits these any more': [] });
});

it('answers a type’s page in JSON to a client that asks for it', async () => {
  for (const name of emittedTypes()) {
    const res = await request(t.app).get(`/problems/${name}`).set('Accept', 'application/json').expect(200);
    expect(res.body).toMatchObject({
      type: `/problems/${name}`,
      status: expect.any(Number),
      title: expect.any(String),
    });
    expect(res.body.when.length).toBeGreaterThan(20);
    expect(res.body.action.length).toBeGreaterThan(5);
  }
});

it('answers a browser with an HTML page saying the status, when it happens and what to do', async () => {
  const res = await request(t.app)
    .get('/problems/validation-failed')
    .set('Accept', 'text/html,application/xhtml+xml,*/*;q=0.8')
    .expect(200)
    .expect('Content-Type', /text\/html/);
  expect(res.text).toContain('<h1>Unprocessable Content</h1>');
  expect(res.text).toContain('<strong>422</strong>');
  expect(res.text).toContain('When it happens');
  expect(res.text).toContain('What to do');
});

it('lists every type at /problems/', async () => {
  const res = await request(t.app).get('/problems/').set('Accept', 'application/json').expect(200);
  expect(res.body.problems).toHaveLength(problemPages.size);
  expect(res.body.problems).toContainEqual({ type: '/problems/not-found', status: 404, title: 'Not Found' });
});

it('answers 404 for a type that does not exist', async () => {
  const res = await request(t.app).get('/problems/no-such-problem').expect(404);
  expect(res.headers['content-type']).toMatch(/application\/problem\+json/);
  expect(res.body.type).toBe('/problems/not-found');
});

it('leads a problem the API answers with to its own page', async () => {
  const problem = await request(t.app).get('/sites/').expect(401);
  await request(t.app).get(problem.body.type).expect(200);
});
