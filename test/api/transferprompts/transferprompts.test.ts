// Transfer prompts: named templates whose {{variables}} must be declared, and
// whose declared variables must be used, on every save; names unique
// regardless of case; global admins write, signed-in callers list.
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { serviceAccount, type Caller } from '../../helpers/factories.ts';
import { expectPaginates, globalAdmin, staffedTenant, unique, type Staffed } from '../../helpers/identity.ts';

let t: TestApp;
let admin: Caller;
let staffed: Staffed;
beforeAll(async () => {
  t = await startTestApp();
  admin = await globalAdmin(t);
  staffed = await staffedTenant(t);
});
afterAll(() => stopTestApp(t));

const handoff = () => ({
  name: `Handoff ${unique()}`,
  description: 'From the researcher to the writer',
  template: 'Write about {{topic}} for {{ audience }}. Notes: {{topic}} matters.',
  variables: [
    { name: 'topic', description: 'What the research found' },
    { name: 'audience', description: 'Who reads it' },
  ],
});

const create = (body: Record<string, unknown>, auth = admin.auth) =>
  request(t.app).post('/transferprompts/').set(auth).send(body);
const change = (id: string, body: Record<string, unknown>, auth = admin.auth) =>
  request(t.app).patch(`/transferprompts/${id}`).set(auth).send(body);
const listAll = async (auth = admin.auth) =>
  (await request(t.app).get('/transferprompts/?limit=200').set(auth).expect(200)).body.items as { id: string }[];

describe('saving', () => {
  it('creates, lists, changes and deletes a transfer prompt', async () => {
    const body = handoff();
    const created = await create(body).expect(201);
    expect(created.body).toMatchObject({ ...body, created_by: admin.user.id, updated_by: admin.user.id });
    expect(await listAll(staffed.author.auth)).toContainEqual(created.body);

    const renamed = await change(created.body.id, { name: `Renamed ${unique()}`, description: 'Changed' }).expect(200);
    expect(renamed.body).toMatchObject({ template: body.template, variables: body.variables, description: 'Changed' });
    // A variable and its use, changed together.
    const rewritten = await change(created.body.id, {
      template: 'Summarise {{topic}} for {{reader}}.',
      variables: [{ name: 'topic' }, { name: 'reader', description: 'Who reads it' }],
    }).expect(200);
    expect(rewritten.body.variables).toEqual([
      { name: 'topic', description: '' },
      { name: 'reader', description: 'Who reads it' },
    ]);
    expect(await listAll()).toContainEqual(rewritten.body);

    await request(t.app).delete(`/transferprompts/${created.body.id}`).set(admin.auth).expect(204);
    expect((await listAll()).map((item) => item.id)).not.toContain(created.body.id);
    await request(t.app).delete(`/transferprompts/${created.body.id}`).set(admin.auth).expect(404);
    await change(created.body.id, { description: 'gone' }).expect(404);
  });

  it('takes a template without variables', async () => {
    const created = await create({ name: `Plain ${unique()}`, template: 'Carry on.' }).expect(201);
    expect(created.body).toMatchObject({ variables: [], description: '' });
  });

  it('names every variable used but not declared, declared but not used, or declared twice (422), storing nothing', async () => {
    const name = `Broken ${unique()}`;
    const res = await create({
      name,
      template: 'Write about {{topic}} for {{audience}} in {{tone}}.',
      variables: [{ name: 'topic' }, { name: 'length' }, { name: 'topic' }, { name: 'audience' }],
    }).expect(422);
    expect(res.body.errors).toEqual(
      expect.arrayContaining([
        { path: 'body.template', message: 'uses {{tone}}, which variables does not declare' },
        { path: 'body.variables.1.name', message: 'length is declared but the template never uses it' },
        { path: 'body.variables.2.name', message: 'topic is declared twice (also variables.0)' },
      ]),
    );
    expect(res.body.errors).toHaveLength(3);
    const names = (await listAll()).map((item) => (item as unknown as { name: string }).name);
    expect(names).not.toContain(name);
  });

  it('refuses what looks like a placeholder but is not one', async () => {
    for (const template of ['Hello {{user name}}', 'Hello {{}}', 'Hello {{ 1st }}', 'Hello {{name', 'Hi {{name}} {{']) {
      const res = await create({ name: `Bad ${unique()}`, template, variables: [{ name: 'name' }] });
      expect([template, res.status]).toEqual([template, 422]);
      expect(res.body.errors).toContainEqual(
        expect.objectContaining({ path: 'body.template', message: expect.stringMatching(/is not a placeholder/) }),
      );
    }
  });

  it('reads a long unclosed {{ in linear time', async () => {
    // A backtracking pattern took 14 s at 4,000 spaces and cubically more past it: this would outlast the test's timeout.
    const res = await create({ name: `Spaces ${unique()}`, template: `{{${' '.repeat(40_000)}`, variables: [] });
    expect(res.status).toBe(422);
  });

  it('checks the result of a change: a template changed alone must still use exactly the variables stored', async () => {
    const created = await create(handoff()).expect(201);
    const dropped = await change(created.body.id, { template: 'Write about {{topic}}.' }).expect(422);
    expect(dropped.body.errors).toEqual([
      { path: 'body.variables.1.name', message: 'audience is declared but the template never uses it' },
    ]);
    const undeclared = await change(created.body.id, { variables: [{ name: 'topic' }] }).expect(422);
    expect(undeclared.body.errors).toEqual([
      { path: 'body.template', message: 'uses {{audience}}, which variables does not declare' },
    ]);
    const stored = (await listAll()).find((item) => item.id === created.body.id);
    expect(stored).toEqual(created.body);
  });

  it('keeps names unique regardless of case (409), also on a rename', async () => {
    const first = handoff();
    await create(first).expect(201);
    const clash = await create({ ...handoff(), name: first.name.toUpperCase() }).expect(409);
    expect(clash.body.detail).toMatch(/exists already/);
    const other = await create(handoff()).expect(201);
    await change(other.body.id, { name: first.name.toLowerCase() }).expect(409);
    // Its own name in another case is no clash.
    await change(other.body.id, { name: other.body.name.toUpperCase() }).expect(200);
  });
});

describe('reading', () => {
  it('lists to any signed-in caller, by name unless sorted otherwise, in pages', async () => {
    await create({ ...handoff(), name: `Zz ${unique()}` }).expect(201);
    await create({ ...handoff(), name: `Aa ${unique()}` }).expect(201);
    const reader = await serviceAccount(t, staffed.tenant, ['content:read']);
    const items = (await listAll(reader.auth)) as unknown as { name: string }[];
    // Every other name here starts with a capital between them.
    expect(items[0]!.name).toMatch(/^Aa /);
    expect(items.at(-1)!.name).toMatch(/^Zz /);
    const newest = await request(t.app).get('/transferprompts/?sort=-created_at&limit=1').set(admin.auth).expect(200);
    expect(newest.body.items[0].name).toMatch(/^Aa /);
    await expectPaginates(t, staffed.editor.auth, '/transferprompts/');
    await expectPaginates(t, staffed.editor.auth, '/transferprompts/?sort=-updated_at');
  });
});

describe('who and what', () => {
  it('answers 401 without a token', async () => {
    const created = await create(handoff()).expect(201);
    await request(t.app).get('/transferprompts/').expect(401);
    await request(t.app).post('/transferprompts/').send(handoff()).expect(401);
    await request(t.app).patch(`/transferprompts/${created.body.id}`).send({ description: 'x' }).expect(401);
    await request(t.app).delete(`/transferprompts/${created.body.id}`).expect(401);
  });

  it('lets only global admins write (403 for tenant admins and service accounts)', async () => {
    const created = await create(handoff()).expect(201);
    const writer = await serviceAccount(t, staffed.tenant, ['content:write']);
    for (const auth of [staffed.admin.auth, staffed.editor.auth, staffed.author.auth, writer.auth]) {
      await create(handoff(), auth).expect(403);
      await change(created.body.id, { description: 'mine' }, auth).expect(403);
      await request(t.app).delete(`/transferprompts/${created.body.id}`).set(auth).expect(403);
    }
    expect(await listAll()).toContainEqual(created.body);
  });

  it('answers 404 for unknown ids', async () => {
    await change(crypto.randomUUID(), { description: 'x' }).expect(404);
    await request(t.app).delete(`/transferprompts/${crypto.randomUUID()}`).set(admin.auth).expect(404);
  });

  it('answers 422 for bad bodies and ids', async () => {
    for (const body of [
      {},
      { name: 'No template' },
      { name: '', template: 'x' },
      { name: 'n'.repeat(201), template: 'x' },
      { name: 'Extra', template: 'x', extra: true },
      { name: 'Bad variable', template: '{{1x}}', variables: [{ name: '1x' }] },
      { name: 'Bad variable shape', template: '{{x}}', variables: ['x'] },
      { name: 'Unknown variable field', template: '{{x}}', variables: [{ name: 'x', default: 'y' }] },
    ])
      await create(body).expect(422);
    const created = await create(handoff()).expect(201);
    await change(created.body.id, { name: '' }).expect(422);
    await change(created.body.id, { template: '' }).expect(422);
    await change(created.body.id, { owner: 'me' }).expect(422);
    await change(created.body.id, {}).expect(422);
    await change('not-a-uuid', { description: 'x' }).expect(422);
    await request(t.app).delete('/transferprompts/not-a-uuid').set(admin.auth).expect(422);
    await request(t.app).get('/transferprompts/?sort=template').set(admin.auth).expect(422);
  });
});
