// An agent's knowledge base through HTTP: adding snapshots of posts and
// texts, listing and reading them with their indexing state, a snapshot
// turning stale when its post changes, removal; who may do which (global
// admins and the document's tenant admins write; whoever sees the agent
// reads the documents of the sites they reach), and tenants sharing an agent
// never seeing each other's documents.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { agentRow, newPostRow } from '../../helpers/agents.ts';
import { contentCast, pathsOf, type ContentCast } from '../../helpers/content.ts';
import { expectPaginates, idsOf, unique, type Auth } from '../../helpers/identity.ts';

let t: TestApp;
let c: ContentCast;
/** Assigned to tenant A only. */
let agent: string;
/** Assigned to tenants A and B. */
let shared: string;

beforeAll(async () => {
  t = await startTestApp();
  c = await contentCast(t);
  agent = await agentRow(t, [c.a.tenant]);
  shared = await agentRow(t, [c.a.tenant, c.b.tenant]);
});
afterAll(() => stopTestApp(t));

const base = (agentId: string) => `/api/agents/${agentId}/knowledge-base`;
const fromPost = (agentId: string, postId: string, auth: Auth) =>
  request(t.app)
    .post(`${base(agentId)}/from-post/${postId}`)
    .set(auth);
const fromText = (agentId: string, body: Record<string, unknown>, auth: Auth) =>
  request(t.app)
    .post(`${base(agentId)}/from-text`)
    .set(auth)
    .send(body);

async function addedPost(agentId = agent, auth = c.a.admin.auth, site = c.a.site) {
  const post = await newPostRow(t, site, {
    title: 'Opening hours',
    excerpt: 'When we open.',
    body: 'Daily from nine.',
  });
  const res = await fromPost(agentId, post, auth).expect(201);
  return { post, document: res.body };
}

describe('adding a post', () => {
  it('snapshots the post with a link to it, waiting to be indexed', async () => {
    const post = await newPostRow(t, c.a.site, { title: 'Opening hours', excerpt: 'When we open.', body: 'Daily.' });
    const res = await fromPost(agent, post, c.a.admin.auth).expect(201);
    expect(res.headers.location).toBe(`${base(agent)}/${res.body.id}`);
    expect(res.body).toMatchObject({
      agent_id: agent,
      site_id: c.a.site.id,
      kind: 'post',
      title: 'Opening hours',
      locale: c.a.site.default_locale,
      format: 'markdown',
      post: { id: post, url: `/${c.a.site.slug}/posts/${post}`, version: 1, current_version: 1, deleted: false },
      stale: false,
      index: { state: 'waiting', job_id: null, chunks: 0, parsing_at: null, completed_at: null },
      created_by: c.a.admin.user.id,
    });
    const read = await request(t.app).get(res.headers.location!).set(c.a.editor.auth).expect(200);
    expect(read.body.body).toBe('When we open.\n\nDaily.');
  });

  it('is for global admins and the post’s tenant admins; others who see the agent get 403', async () => {
    const post = await newPostRow(t, c.a.site);
    for (const auth of [c.a.editor.auth, c.author.auth, c.writer]) await fromPost(agent, post, auth).expect(403);
    await fromPost(agent, post, c.admin.auth).expect(201);
    await request(t.app)
      .post(`${base(agent)}/from-post/${post}`)
      .expect(401);
  });

  it('answers 404 for an agent or a post the caller does not see, and 422 for ids that are not ids', async () => {
    const post = await newPostRow(t, c.a.site);
    await fromPost(agent, post, c.b.admin.auth).expect(404); // the agent serves A only
    await fromPost(shared, post, c.b.admin.auth).expect(404); // B's admin does not reach A's post
    await fromPost(crypto.randomUUID(), post, c.admin.auth).expect(404);
    await fromPost(agent, crypto.randomUUID(), c.a.admin.auth).expect(404);
    const bad = await fromPost('not-an-id', post, c.a.admin.auth).expect(422);
    expect(pathsOf(bad.body)).toEqual(['params.agent_id']);
  });

  it('refuses a post of a tenant the agent does not serve, and a post it already has (naming its document)', async () => {
    const ofB = await newPostRow(t, c.b.site);
    const elsewhere = await fromPost(agent, ofB, c.admin.auth).expect(409);
    expect(elsewhere.body.detail).toMatch(/not assigned/);
    const { post, document } = await addedPost();
    const again = await fromPost(agent, post, c.a.admin.auth).expect(409);
    expect(again.body.document_id).toBe(document.id);
    // Another agent may take the same post.
    await fromPost(shared, post, c.a.admin.auth).expect(201);
  });
});

describe('adding a text', () => {
  it('adds Markdown (the default) or plain text for a site, in the site’s locale unless given', async () => {
    const markdown = await fromText(
      agent,
      { site_identifier: c.a.site.slug, title: 'Returns', content: '# Returns\n\nWithin *30 days*.' },
      c.a.admin.auth,
    ).expect(201);
    expect(markdown.body).toMatchObject({ kind: 'text', format: 'markdown', post: null, stale: false, characters: 28 });
    expect(markdown.body.locale).toBe(c.a.site.default_locale);
    const plain = await fromText(
      agent,
      {
        site_identifier: c.a.site.id,
        title: 'Rückgabe',
        content: 'Innerhalb von 30 Tagen.',
        format: 'plain',
        locale: 'de',
      },
      c.admin.auth,
    ).expect(201);
    expect(plain.body).toMatchObject({ format: 'plain', locale: 'de', site_id: c.a.site.id });
  });

  it('checks the body, the caller and the site', async () => {
    const ok = { site_identifier: c.a.site.slug, title: 'T', content: 'Text.' };
    for (const [body, paths] of [
      [{}, ['body.content', 'body.site_identifier', 'body.title']],
      [{ ...ok, title: '  ' }, ['body.title']],
      [{ ...ok, format: 'html' }, ['body.format']],
      [{ ...ok, extra: 1 }, ['body']],
    ] as const) {
      const res = await fromText(agent, body, c.a.admin.auth).expect(422);
      expect(pathsOf(res.body)).toEqual(paths);
    }
    await request(t.app)
      .post(`${base(agent)}/from-text`)
      .send(ok)
      .expect(401);
    await fromText(agent, ok, c.a.editor.auth).expect(403);
    await fromText(agent, { ...ok, site_identifier: c.b.site.slug }, c.a.admin.auth).expect(404);
    await fromText(agent, ok, c.b.admin.auth).expect(404);
    // A site of a tenant the agent does not serve.
    await fromText(agent, { ...ok, site_identifier: c.b.site.slug }, c.admin.auth).expect(409);
  });
});

describe('reading', () => {
  it('lists the documents oldest first, with filters and pages', async () => {
    const own = await agentRow(t, [c.a.tenant]);
    const first = await addedPost(own);
    const second = await addedPost(own);
    const ids = await expectPaginates(t, c.a.admin.auth, base(own));
    expect(ids).toEqual([first.document.id, second.document.id]);
    const waiting = await request(t.app)
      .get(`${base(own)}?state=waiting`)
      .set(c.a.editor.auth)
      .expect(200);
    expect(idsOf(waiting.body)).toEqual(ids);
    const completed = await request(t.app)
      .get(`${base(own)}?state=completed`)
      .set(c.author.auth)
      .expect(200);
    expect(completed.body.items).toEqual([]);
    await request(t.app)
      .get(`${base(own)}?state=done`)
      .set(c.a.admin.auth)
      .expect(422);
  });

  it('shows each tenant sharing an agent its own documents only', async () => {
    const own = await agentRow(t, [c.a.tenant, c.b.tenant]);
    const ofA = await addedPost(own);
    const ofB = await addedPost(own, c.b.admin.auth, c.b.site);
    const seenBy = async (auth: Auth) => idsOf((await request(t.app).get(base(own)).set(auth).expect(200)).body);
    expect(await seenBy(c.a.admin.auth)).toEqual([ofA.document.id]);
    expect(await seenBy(c.b.admin.auth)).toEqual([ofB.document.id]);
    expect(await seenBy(c.admin.auth)).toEqual([ofA.document.id, ofB.document.id]);
    expect(await seenBy(c.reader)).toEqual([ofA.document.id]);
    await request(t.app)
      .get(`${base(own)}/${ofA.document.id}`)
      .set(c.b.admin.auth)
      .expect(404);
    await request(t.app)
      .delete(`${base(own)}/${ofA.document.id}`)
      .set(c.b.admin.auth)
      .expect(404);
  });

  it('shows editors and authors the documents of the sites they are assigned to', async () => {
    const other = (
      await request(t.app)
        .post('/sites/')
        .set(c.a.admin.auth)
        .send({
          tenant_id: c.a.tenant.id,
          name: 'Second',
          slug: `second-${unique()}`,
        })
    ).body;
    const own = await agentRow(t, [c.a.tenant]);
    const onOther = await addedPost(own, c.a.admin.auth, other);
    const onA = await addedPost(own);
    const seen = await request(t.app).get(base(own)).set(c.a.editor.auth).expect(200);
    expect(idsOf(seen.body)).toEqual([onA.document.id]);
    await request(t.app)
      .get(`${base(own)}/${onOther.document.id}`)
      .set(c.author.auth)
      .expect(404);
  });

  it('is for those who see the agent: 401 without a token, 403 for a service account without content:read, 404 else', async () => {
    await request(t.app).get(base(agent)).expect(401);
    await request(t.app).get(base(agent)).set(c.noScope).expect(403);
    await request(t.app).get(base(agent)).set(c.b.admin.auth).expect(404);
    await request(t.app).get(base(crypto.randomUUID())).set(c.admin.auth).expect(404);
    await request(t.app)
      .get(`${base(agent)}/${crypto.randomUUID()}`)
      .set(c.a.admin.auth)
      .expect(404);
    await request(t.app)
      .get(`${base(agent)}/nope`)
      .set(c.a.admin.auth)
      .expect(422);
    const { document } = await addedPost();
    await request(t.app)
      .get(`${base(agent)}/${document.id}`)
      .expect(401);
    await request(t.app)
      .get(`${base(agent)}/${document.id}`)
      .set(c.noScope)
      .expect(403);
    await request(t.app)
      .get(`${base(agent)}/${document.id}`)
      .set(c.reader)
      .expect(200);
  });
});

describe('staleness', () => {
  it('says a snapshot is stale once its post changes, and that the post is gone once deleted', async () => {
    const { post, document } = await addedPost();
    const url = `${base(agent)}/${document.id}`;
    await request(t.app)
      .patch(`/${c.a.site.slug}/posts/${post}`)
      .set(c.a.admin.auth)
      .send({ title: 'New hours' })
      .expect(200);
    const stale = await request(t.app).get(url).set(c.a.admin.auth).expect(200);
    expect(stale.body).toMatchObject({ stale: true, title: 'Opening hours', post: { version: 1, current_version: 2 } });
    const listed = await request(t.app)
      .get(`${base(agent)}?stale=true`)
      .set(c.a.admin.auth)
      .expect(200);
    expect(idsOf(listed.body)).toContain(document.id);
    const fresh = await request(t.app)
      .get(`${base(agent)}?stale=false`)
      .set(c.a.admin.auth)
      .expect(200);
    expect(idsOf(fresh.body)).not.toContain(document.id);

    await request(t.app).delete(`/${c.a.site.slug}/posts/${post}`).set(c.a.admin.auth).expect(204);
    const gone = await request(t.app).get(url).set(c.a.admin.auth).expect(200);
    expect(gone.body).toMatchObject({
      stale: false,
      post: { id: null, url: null, version: 1, current_version: null, deleted: true },
      body: 'When we open.\n\nDaily from nine.',
    });
  });
});

describe('removing', () => {
  it('removes a document for global admins and its tenant’s admins only', async () => {
    const { document } = await addedPost();
    const url = `${base(agent)}/${document.id}`;
    await request(t.app).delete(url).expect(401);
    for (const auth of [c.a.editor.auth, c.author.auth, c.writer])
      await request(t.app).delete(url).set(auth).expect(403);
    await request(t.app).delete(url).set(c.b.admin.auth).expect(404);
    await request(t.app).delete(url).set(c.a.admin.auth).expect(204);
    await request(t.app).get(url).set(c.a.admin.auth).expect(404);
    await request(t.app).delete(url).set(c.admin.auth).expect(404);
    await request(t.app)
      .delete(`${base(agent)}/x`)
      .set(c.admin.auth)
      .expect(422);
  });

  it('goes with its agent, chunks and counts included', async () => {
    const own = await agentRow(t, [c.a.tenant]);
    const { document } = await addedPost(own);
    // Chunks as indexing writes them (the job is another file's).
    await t.services.db.query(sql.typeAlias('void')`
      insert into knowledge_chunks (document_id, agent_id, tenant_id, site_id, locale, source_kind, ordinal, content, tokens,
                                    start_offset, end_offset, tsv)
      values (${document.id}, ${own}, ${c.a.tenant.id}, ${c.a.site.id}, 'en', 'post', 0, 'Daily from nine.', 4, 0, 16,
              to_tsvector('english', 'Daily from nine.'))`);
    const left = () =>
      t.services.db.one(
        sql.type(z.object({ rows: z.array(z.number()) }))`
          select array[(select count(*) from knowledge_documents where agent_id = ${own}),
                       (select count(*) from knowledge_chunks where agent_id = ${own}),
                       (select count(*) from knowledge_count_changes where agent_id = ${own}),
                       (select count(*) from knowledge_terms where agent_id = ${own}),
                       (select count(*) from knowledge_locales where agent_id = ${own})]::int[] as rows`,
      );
    // The changes of daili, nine and en, then folded into their counts.
    expect(await left()).toEqual({ rows: [1, 1, 3, 0, 0] });
    await t.services.db.query(sql.typeAlias('void')`select from knowledge_counts_fold(${own})`);
    expect(await left()).toEqual({ rows: [1, 1, 0, 2, 1] });
    // Changes not folded yet go too.
    await t.services.db.query(sql.typeAlias('void')`delete from knowledge_chunks where agent_id = ${own}`);
    expect(await left()).toEqual({ rows: [1, 0, 3, 2, 1] });
    await t.services.db.query(sql.typeAlias('void')`delete from agents where id = ${own}`);
    expect(await left()).toEqual({ rows: [0, 0, 0, 0, 0] });
  });

  it('loses a tenant’s documents when the agent stops serving the tenant', async () => {
    const own = await agentRow(t, [c.a.tenant, c.b.tenant]);
    await addedPost(own);
    const ofB = await addedPost(own, c.b.admin.auth, c.b.site);
    await t.services.db.query(sql.typeAlias('void')`
      delete from agent_tenants where agent_id = ${own} and tenant_id = ${c.a.tenant.id}`);
    const left = await t.services.db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
      select id from knowledge_documents where agent_id = ${own}`);
    expect(left).toEqual([ofB.document.id]);
  });
});
