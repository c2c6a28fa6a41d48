// System prompts: global admins create and update them by type, each change a
// version kept with who wrote it and when; every signed-in caller reads them;
// DELETE takes the versions with it. (That the text jobs use them:
// ./generation.test.ts.)
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { serviceAccount, type Caller } from '../../helpers/factories.ts';
import { expectPaginates, globalAdmin, staffedTenant, unique, type Staffed } from '../../helpers/identity.ts';

let t: TestApp;
let admin: Caller;
let otherAdmin: Caller;
let staffed: Staffed;
beforeAll(async () => {
  t = await startTestApp();
  admin = await globalAdmin(t);
  otherAdmin = await globalAdmin(t);
  staffed = await staffedTenant(t);
});
afterAll(() => stopTestApp(t));

const type = () => `test-${unique()}`;
const save = (prompt: string, body: Record<string, unknown>, auth = admin.auth) =>
  request(t.app).post(`/system-prompts/${prompt}`).set(auth).send(body);

describe('saving', () => {
  it('creates version 1, then keeps every earlier version with who wrote it', async () => {
    const seo = type();
    const created = await save(seo, { content: 'Write for bakers.', description: 'House voice' }).expect(201);
    expect(created.headers.location).toBe(`/system-prompts/${seo}`);
    expect(created.body).toMatchObject({
      prompt_type: seo,
      content: 'Write for bakers.',
      description: 'House voice',
      version: 1,
      created_by: admin.user.id,
      updated_by: admin.user.id,
    });

    // Another admin's change: version 2; without a description, the current one is kept.
    const updated = await save(seo, { content: 'Write for bakers, briefly.' }, otherAdmin.auth).expect(200);
    expect(updated.body).toMatchObject({
      id: created.body.id,
      version: 2,
      content: 'Write for bakers, briefly.',
      description: 'House voice',
      created_by: admin.user.id,
      updated_by: otherAdmin.user.id,
    });

    const read = await request(t.app).get(created.headers.location!).set(staffed.author.auth).expect(200);
    expect(read.body).toMatchObject({ version: 2, content: 'Write for bakers, briefly.', next_versions_before: null });
    expect(read.body.versions).toEqual([
      expect.objectContaining({ version: 2, content: 'Write for bakers, briefly.', changed_by: otherAdmin.user.id }),
      expect.objectContaining({ version: 1, content: 'Write for bakers.', changed_by: admin.user.id }),
    ]);
    expect(Date.parse(read.body.versions[0].changed_at)).toBeGreaterThanOrEqual(
      Date.parse(read.body.versions[1].changed_at),
    );
  });

  it('makes no version when the text and description are unchanged', async () => {
    const prompt = type();
    await save(prompt, { content: 'Same.', description: 'd' }).expect(201);
    const again = await save(prompt, { content: '  Same.  ' }).expect(200);
    expect(again.body).toMatchObject({ version: 1, content: 'Same.', description: 'd' });
    const changedDescription = await save(prompt, { content: 'Same.', description: 'e' }).expect(200);
    expect(changedDescription.body.version).toBe(2);
    const read = await request(t.app).get(`/system-prompts/${prompt}`).set(admin.auth).expect(200);
    expect(read.body.versions.map((version: { version: number }) => version.version)).toEqual([2, 1]);
  });

  it('gives two saves at once a version each', async () => {
    const prompt = type();
    const answers = await Promise.all(['one', 'two', 'three'].map((content) => save(prompt, { content })));
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 200, 201]);
    expect(answers.map((answer) => answer.body.version).sort()).toEqual([1, 2, 3]);
    const read = await request(t.app).get(`/system-prompts/${prompt}`).set(admin.auth).expect(200);
    expect(read.body.versions).toHaveLength(3);
  });

  it('pages through the versions, newest first', async () => {
    const prompt = type();
    for (const n of [1, 2, 3, 4, 5]) await save(prompt, { content: `Version ${n}` }).expect(n === 1 ? 201 : 200);
    const first = await request(t.app).get(`/system-prompts/${prompt}?versions_limit=2`).set(admin.auth).expect(200);
    expect(first.body.versions.map((version: { version: number }) => version.version)).toEqual([5, 4]);
    expect(first.body.next_versions_before).toBe(4);
    const second = await request(t.app)
      .get(`/system-prompts/${prompt}?versions_limit=2&versions_before=4`)
      .set(admin.auth)
      .expect(200);
    expect(second.body.versions.map((version: { version: number }) => version.version)).toEqual([3, 2]);
    const last = await request(t.app)
      .get(`/system-prompts/${prompt}?versions_limit=2&versions_before=2`)
      .set(admin.auth)
      .expect(200);
    expect(last.body).toMatchObject({ version: 5, content: 'Version 5', next_versions_before: null });
    expect(last.body.versions.map((version: { version: number }) => version.version)).toEqual([1]);
    const none = await request(t.app).get(`/system-prompts/${prompt}?versions_limit=0`).set(admin.auth).expect(200);
    expect(none.body).toMatchObject({ versions: [], next_versions_before: 6 });
  });
});

describe('reading', () => {
  it('lists every prompt with its current text to any signed-in caller, by type or by change', async () => {
    const [first, second] = [`aa-${unique()}`, `ab-${unique()}`];
    await save(second, { content: 'Second' }).expect(201);
    await save(first, { content: 'First, old' }).expect(201);
    await save(first, { content: 'First' }).expect(200);
    const reader = await serviceAccount(t, staffed.tenant, ['content:read']);
    for (const auth of [staffed.author.auth, reader.auth]) {
      const list = await request(t.app).get('/system-prompts/?limit=200').set(auth).expect(200);
      const types = list.body.items.map((item: { prompt_type: string }) => item.prompt_type);
      expect(types).toEqual([...types].sort());
      expect(list.body.items).toContainEqual(
        expect.objectContaining({ prompt_type: first, content: 'First', version: 2 }),
      );
    }
    const recent = await request(t.app).get('/system-prompts/?sort=-updated_at&limit=2').set(admin.auth).expect(200);
    expect(recent.body.items.map((item: { prompt_type: string }) => item.prompt_type)).toEqual([first, second]);
    await expectPaginates(t, staffed.editor.auth, '/system-prompts/');
    await expectPaginates(t, staffed.editor.auth, '/system-prompts/?sort=-updated_at');
  });
});

describe('deleting', () => {
  it('removes the prompt and its versions; saving the type again starts over at version 1', async () => {
    const prompt = type();
    await save(prompt, { content: 'One' }).expect(201);
    await save(prompt, { content: 'Two' }).expect(200);
    await request(t.app).delete(`/system-prompts/${prompt}`).set(admin.auth).expect(204);
    await request(t.app).get(`/system-prompts/${prompt}`).set(admin.auth).expect(404);
    await request(t.app).delete(`/system-prompts/${prompt}`).set(admin.auth).expect(404);
    const list = await request(t.app).get('/system-prompts/?limit=200').set(admin.auth).expect(200);
    expect(list.body.items.map((item: { prompt_type: string }) => item.prompt_type)).not.toContain(prompt);
    const again = await save(prompt, { content: 'Three' }).expect(201);
    expect(again.body.version).toBe(1);
    const read = await request(t.app).get(`/system-prompts/${prompt}`).set(admin.auth).expect(200);
    expect(read.body.versions).toEqual([expect.objectContaining({ version: 1, content: 'Three' })]);
  });
});

describe('who and what', () => {
  it('answers 401 without a token', async () => {
    const prompt = type();
    await save(prompt, { content: 'x' }).expect(201);
    await request(t.app).get('/system-prompts/').expect(401);
    await request(t.app).get(`/system-prompts/${prompt}`).expect(401);
    await request(t.app).post(`/system-prompts/${prompt}`).send({ content: 'y' }).expect(401);
    await request(t.app).delete(`/system-prompts/${prompt}`).expect(401);
  });

  it('lets only global admins write (403 for tenant admins and service accounts)', async () => {
    const prompt = type();
    await save(prompt, { content: 'x' }).expect(201);
    const writer = await serviceAccount(t, staffed.tenant, ['content:write']);
    for (const auth of [staffed.admin.auth, staffed.editor.auth, writer.auth]) {
      await save(prompt, { content: 'mine now' }, auth).expect(403);
      await save(type(), { content: 'new' }, auth).expect(403);
      await request(t.app).delete(`/system-prompts/${prompt}`).set(auth).expect(403);
    }
    const read = await request(t.app).get(`/system-prompts/${prompt}`).set(admin.auth).expect(200);
    expect(read.body).toMatchObject({ content: 'x', version: 1 });
  });

  it('answers 404 for a type nobody stored', async () => {
    await request(t.app).get(`/system-prompts/${type()}`).set(staffed.author.auth).expect(404);
    await request(t.app).delete(`/system-prompts/${type()}`).set(admin.auth).expect(404);
  });

  it('answers 422 for a type that is not a slug and for bad bodies', async () => {
    for (const bad of ['Seo', 'seo--x', '-seo', 'seo_', 'a'.repeat(64), 'sé'])
      for (const call of [
        request(t.app)
          .get(`/system-prompts/${encodeURIComponent(bad)}`)
          .set(admin.auth),
        request(t.app)
          .post(`/system-prompts/${encodeURIComponent(bad)}`)
          .set(admin.auth)
          .send({ content: 'x' }),
        request(t.app)
          .delete(`/system-prompts/${encodeURIComponent(bad)}`)
          .set(admin.auth),
      ]) {
        const res = await call;
        expect([bad, res.status]).toEqual([bad, 422]);
        expect(res.body.errors[0].path).toBe('params.prompt_type');
      }
    const prompt = type();
    for (const body of [
      {},
      { content: '' },
      { content: '   ' },
      { content: 'x'.repeat(50_001) },
      { content: 'x', description: 'd'.repeat(2001) },
      { content: 'x', version: 3 },
      { content: 42 },
    ])
      await save(prompt, body).expect(422);
    await request(t.app).get(`/system-prompts/${prompt}`).set(admin.auth).expect(404);
    // Past what the version column holds: a 422, not the database's 500.
    await save(prompt, { content: 'x' }).expect(201);
    await request(t.app).get(`/system-prompts/${prompt}?versions_before=3000000000`).set(admin.auth).expect(422);
    await request(t.app).get('/system-prompts/?sort=content').set(admin.auth).expect(422);
    await request(t.app).get(`/system-prompts/${prompt}?versions_limit=201`).set(admin.auth).expect(422);
  });
});
