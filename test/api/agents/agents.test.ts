// Agents (/api/agents) through HTTP: global administrators write them and
// assign them to tenants; members of an assigned tenant (and its service
// accounts) see them, anyone else gets 404; counts for a tenant's admins;
// avatars that are ready images of an assigned tenant's site and hold their
// media item against deletion.
import request from 'supertest';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { newAgent as createAgent } from '../../helpers/agents.ts';
import { startTestApp, stopTestApp, type TestApp } from '../../helpers/app.ts';
import { mediaRow, pathsOf } from '../../helpers/content.ts';
import { serviceAccount, signedIn, type Caller } from '../../helpers/factories.ts';
import { expectPaginates, globalAdmin, idsOf, staffedTenant, type Staffed } from '../../helpers/identity.ts';

let t: TestApp;
let a: Staffed;
let b: Staffed;
let admin: Caller;
beforeAll(async () => {
  t = await startTestApp();
  a = await staffedTenant(t);
  b = await staffedTenant(t);
  admin = await globalAdmin(t);
});
afterAll(() => stopTestApp(t));

const missing = '00000000-0000-4000-8000-000000000000';

const newAgent = (body: Record<string, unknown> = {}, tenants: string[] = []) => createAgent(t, admin, body, tenants);

describe('POST /api/agents', () => {
  it('lets a global administrator create an agent, with defaults, tools without repeats and a Location', async () => {
    const res = await request(t.app)
      .post('/api/agents/')
      .set(admin.auth)
      .send({ name: ' Writer ', tools: ['create_post', 'get_page', 'create_post'], model: 'gpt-x', temperature: 0.2 })
      .expect(201);
    expect(res.headers.location).toBe(`/api/agents/${res.body.id}`);
    expect(res.body).toEqual({
      id: expect.any(String),
      name: 'Writer',
      description: '',
      instructions: '',
      model: 'gpt-x',
      temperature: 0.2,
      system_prompt_type: null,
      tools: ['create_post', 'get_page'],
      knowledge_first: false,
      avatar_media_id: null,
      status: 'active',
      created_by: admin.user.id,
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    const read = await request(t.app).get(res.headers.location!).set(admin.auth).expect(200);
    expect(read.body).toEqual(res.body);
  });

  it('refuses tools outside the nine operations, and other bad fields, all at once', async () => {
    const res = await request(t.app)
      .post('/api/agents')
      .set(admin.auth)
      .send({ name: '', tools: ['get_page', 'rm_rf'], temperature: 3, system_prompt_type: 'Not A Type', color: 'red' })
      .expect(422);
    expect(pathsOf(res.body)).toEqual([
      'body',
      'body.name',
      'body.system_prompt_type',
      'body.temperature',
      'body.tools.1',
    ]);
  });

  it('stores any temperature from 0 to 2 as given, tiny magnitudes too, on create and change', async () => {
    for (const temperature of [1e-50, 5e-324, 2, 0.1 + 0.2]) {
      const created = await request(t.app)
        .post('/api/agents')
        .set(admin.auth)
        .send({ name: 'Precise', temperature })
        .expect(201);
      expect(created.body.temperature).toBe(temperature);
      const changed = await request(t.app)
        .patch(`/api/agents/${created.body.id}`)
        .set(admin.auth)
        .send({ temperature: temperature / 2 })
        .expect(200);
      expect(changed.body.temperature).toBe(temperature / 2);
      const read = await request(t.app).get(`/api/agents/${created.body.id}`).set(admin.auth).expect(200);
      expect(read.body.temperature).toBe(temperature / 2);
    }
  });

  it('is for global administrators only', async () => {
    await request(t.app).post('/api/agents').send({ name: 'x' }).expect(401);
    await request(t.app).post('/api/agents').set(a.admin.auth).send({ name: 'x' }).expect(403);
    const bot = await serviceAccount(t, a.tenant, ['sites:read'], a.admin);
    await request(t.app).post('/api/agents').set(bot.auth).send({ name: 'x' }).expect(403);
  });
});

describe('who sees an agent', () => {
  it('shows it to the members and service accounts of assigned tenants only', async () => {
    const agent = await newAgent({ name: 'Visible' }, [a.tenant.id]);
    const bot = await serviceAccount(t, a.tenant, ['sites:read'], a.admin);
    for (const auth of [a.admin.auth, a.editor.auth, a.author.auth, bot.auth, admin.auth]) {
      expect((await request(t.app).get(`/api/agents/${agent.id}`).set(auth).expect(200)).body.id).toBe(agent.id);
      expect(idsOf((await request(t.app).get('/api/agents').set(auth).expect(200)).body)).toContain(agent.id);
    }
    const outsider = await signedIn(t);
    for (const auth of [b.admin.auth, b.editor.auth, outsider.auth]) {
      await request(t.app).get(`/api/agents/${agent.id}`).set(auth).expect(404);
      expect(idsOf((await request(t.app).get('/api/agents').set(auth).expect(200)).body)).not.toContain(agent.id);
    }
    await request(t.app).get(`/api/agents/${agent.id}`).expect(401);
    await request(t.app).get(`/api/agents/${missing}`).set(admin.auth).expect(404);
    await request(t.app).get('/api/agents/not-an-id').set(admin.auth).expect(422);
  });

  it('stops showing it to a suspended tenant’s members and to a tenant it was removed from', async () => {
    const agent = await newAgent({ name: 'Fleeting' }, [a.tenant.id, b.tenant.id]);
    await request(t.app).get(`/api/agents/${agent.id}`).set(b.editor.auth).expect(200);
    await request(t.app).delete(`/api/agents/${agent.id}/tenants/${b.tenant.id}`).set(admin.auth).expect(204);
    await request(t.app).get(`/api/agents/${agent.id}`).set(b.editor.auth).expect(404);
    await request(t.app).get(`/api/agents/${agent.id}`).set(a.editor.auth).expect(200);

    const suspended = await staffedTenant(t);
    const theirs = await newAgent({ name: 'Paused' }, [suspended.tenant.id]);
    await request(t.app).get(`/api/agents/${theirs.id}`).set(suspended.editor.auth).expect(200);
    await t.services.db.query(
      sql.typeAlias('void')`update tenants set status = 'suspended' where id = ${suspended.tenant.id}`,
    );
    await request(t.app).get(`/api/agents/${theirs.id}`).set(suspended.editor.auth).expect(404);
  });

  it('lists with filters and keyset pages', async () => {
    const tenant = await staffedTenant(t);
    const first = await newAgent({ name: 'Alpha scout' }, [tenant.tenant.id]);
    const second = await newAgent({ name: 'Beta scout', status: 'disabled' }, [tenant.tenant.id]);
    await newAgent({ name: 'Gamma scout' }, [a.tenant.id]);
    expect(await expectPaginates(t, tenant.editor.auth, '/api/agents')).toEqual([first.id, second.id]);
    const list = (query: string) => request(t.app).get(`/api/agents?${query}`).set(admin.auth).expect(200);
    expect(idsOf((await list(`tenant_id=${tenant.tenant.id}&status=disabled`)).body)).toEqual([second.id]);
    expect(idsOf((await list(`tenant_id=${tenant.tenant.id}&q=ALPHA`)).body)).toEqual([first.id]);
    await request(t.app).get('/api/agents?status=sleeping').set(admin.auth).expect(422);
    // Another tenant's id as a filter says nothing about which agents it uses.
    await newAgent({ name: 'Shared scout' }, [tenant.tenant.id, a.tenant.id]);
    await request(t.app).get(`/api/agents?tenant_id=${tenant.tenant.id}`).set(a.author.auth).expect(404);
    expect(idsOf((await list(`tenant_id=${tenant.tenant.id}&q=shared`)).body)).toHaveLength(1);
  });
});

describe('PATCH and DELETE /api/agents/{agent_id}', () => {
  it('changes what is given, for global administrators; members who see it get 403, others 404', async () => {
    const agent = await newAgent({ name: 'Before', tools: ['get_page'] }, [a.tenant.id]);
    const res = await request(t.app)
      .patch(`/api/agents/${agent.id}`)
      .set(admin.auth)
      .send({ instructions: 'Be brief.', tools: ['list_media', 'get_job'], status: 'disabled' })
      .expect(200);
    expect(res.body).toMatchObject({
      name: 'Before',
      instructions: 'Be brief.',
      tools: ['list_media', 'get_job'],
      status: 'disabled',
    });
    await request(t.app).patch(`/api/agents/${agent.id}`).set(a.admin.auth).send({ name: 'Mine' }).expect(403);
    await request(t.app).patch(`/api/agents/${agent.id}`).set(b.admin.auth).send({ name: 'Mine' }).expect(404);
    await request(t.app).patch(`/api/agents/${agent.id}`).send({ name: 'Mine' }).expect(401);
    const bad = await request(t.app).patch(`/api/agents/${agent.id}`).set(admin.auth).send({}).expect(422);
    expect(pathsOf(bad.body)).toEqual(['body']);
    await request(t.app)
      .patch(`/api/agents/${agent.id}`)
      .set(admin.auth)
      .send({ tools: ['fly'] })
      .expect(422);
    await request(t.app).patch(`/api/agents/${missing}`).set(admin.auth).send({ name: 'x' }).expect(404);
    expect((await request(t.app).get(`/api/agents/${agent.id}`).set(admin.auth)).body.name).toBe('Before');
  });

  it('deletes an agent with its assignments, for global administrators', async () => {
    const agent = await newAgent({ name: 'Doomed' }, [a.tenant.id]);
    await request(t.app).delete(`/api/agents/${agent.id}`).set(a.admin.auth).expect(403);
    await request(t.app).delete(`/api/agents/${agent.id}`).set(b.admin.auth).expect(404);
    await request(t.app).delete(`/api/agents/${agent.id}`).expect(401);
    await request(t.app).delete(`/api/agents/${agent.id}`).set(admin.auth).expect(204);
    await request(t.app).get(`/api/agents/${agent.id}`).set(admin.auth).expect(404);
    await request(t.app).delete(`/api/agents/${agent.id}`).set(admin.auth).expect(404);
    const left = await t.services.db.oneFirst(sql.type(z.object({ count: z.number() }))`
      select count(*)::int as count from agent_tenants where agent_id = ${agent.id}`);
    expect(left).toBe(0);
  });
});

describe('tenants of an agent', () => {
  it('assigns (201, then 200 changing nothing), lists and removes, for global administrators', async () => {
    const agent = await newAgent({ name: 'Shared' });
    const assigned = await request(t.app)
      .post(`/api/agents/${agent.id}/tenants/${a.tenant.id}`)
      .set(admin.auth)
      .expect(201);
    expect(assigned.body).toEqual({
      tenant_id: a.tenant.id,
      name: a.tenant.name,
      slug: a.tenant.slug,
      assigned_by: admin.user.id,
      assigned_at: expect.any(String),
    });
    const again = await request(t.app)
      .post(`/api/agents/${agent.id}/tenants/${a.tenant.id}`)
      .set(admin.auth)
      .expect(200);
    expect(again.body).toEqual(assigned.body);
    await request(t.app).post(`/api/agents/${agent.id}/tenants/${b.tenant.id}`).set(admin.auth).expect(201);
    const listed = await request(t.app).get(`/api/agents/${agent.id}/tenants`).set(admin.auth).expect(200);
    expect(listed.body.items.map((item: { tenant_id: string }) => item.tenant_id)).toEqual([a.tenant.id, b.tenant.id]);
    await request(t.app).delete(`/api/agents/${agent.id}/tenants/${b.tenant.id}`).set(admin.auth).expect(204);
    await request(t.app).delete(`/api/agents/${agent.id}/tenants/${b.tenant.id}`).set(admin.auth).expect(404);
    await request(t.app).post(`/api/agents/${agent.id}/tenants/${missing}`).set(admin.auth).expect(404);
    await request(t.app).post(`/api/agents/${missing}/tenants/${a.tenant.id}`).set(admin.auth).expect(404);
    await request(t.app).post(`/api/agents/${agent.id}/tenants/nope`).set(admin.auth).expect(422);
  });

  it('answers members who see the agent 403 and others 404', async () => {
    const agent = await newAgent({ name: 'Guarded' }, [a.tenant.id]);
    await request(t.app).get(`/api/agents/${agent.id}/tenants`).set(a.admin.auth).expect(403);
    await request(t.app).get(`/api/agents/${agent.id}/tenants`).set(b.admin.auth).expect(404);
    await request(t.app).post(`/api/agents/${agent.id}/tenants/${b.tenant.id}`).set(a.admin.auth).expect(403);
    await request(t.app).post(`/api/agents/${agent.id}/tenants/${b.tenant.id}`).set(b.admin.auth).expect(404);
    await request(t.app).delete(`/api/agents/${agent.id}/tenants/${a.tenant.id}`).set(a.admin.auth).expect(403);
    await request(t.app).delete(`/api/agents/${agent.id}/tenants/${a.tenant.id}`).set(b.admin.auth).expect(404);
    await request(t.app).get(`/api/agents/${agent.id}/tenants`).expect(401);
    await request(t.app).get(`/api/agents/${agent.id}`).set(a.admin.auth).expect(200);
  });

  it('counts a tenant’s agents for global administrators and the tenant’s administrators', async () => {
    const tenant = await staffedTenant(t);
    await newAgent({ name: 'One' }, [tenant.tenant.id]);
    await newAgent({ name: 'Two' }, [tenant.tenant.id, a.tenant.id]);
    const path = `/api/agents/tenant/${tenant.tenant.id}/count`;
    for (const auth of [admin.auth, tenant.admin.auth]) {
      expect((await request(t.app).get(path).set(auth).expect(200)).body).toEqual({
        tenant_id: tenant.tenant.id,
        count: 2,
      });
    }
    await request(t.app).get(path).set(tenant.editor.auth).expect(403);
    await request(t.app).get(path).set(a.admin.auth).expect(404);
    await request(t.app).get(path).expect(401);
    await request(t.app).get(`/api/agents/tenant/${missing}/count`).set(admin.auth).expect(404);
    await request(t.app).get('/api/agents/tenant/nope/count').set(admin.auth).expect(422);
  });

  it('lists every agent with its tenants for global administrators', async () => {
    const agent = await newAgent({ name: 'Everywhere' }, [a.tenant.id, b.tenant.id]);
    const lonely = await newAgent({ name: 'Nowhere' });
    const all: { id: string; name: string; tenants: { tenant_id: string }[] }[] = [];
    for (let cursor: string | null = null, first = true; first || cursor; first = false) {
      const page: request.Response = await request(t.app)
        .get(`/api/agents/admin/all?limit=3${cursor ? `&cursor=${cursor}` : ''}`)
        .set(admin.auth)
        .expect(200);
      all.push(...page.body.items);
      cursor = page.body.next_cursor;
    }
    const byId = new Map(all.map((item) => [item.id, item]));
    expect(byId.get(agent.id)?.tenants.map((tenant) => tenant.tenant_id)).toEqual([a.tenant.id, b.tenant.id]);
    expect(byId.get(lonely.id)).toMatchObject({ name: 'Nowhere', tenants: [] });
    await request(t.app).get('/api/agents/admin/all').set(a.admin.auth).expect(403);
    await request(t.app).get('/api/agents/admin/all').expect(401);
    await request(t.app).get('/api/agents/admin/all?limit=0').set(admin.auth).expect(422);
  });
});

describe('POST /api/agents/{agent_id}/avatar/{media_id}', () => {
  const avatar = (agentId: string, mediaId: string, auth = admin.auth) =>
    request(t.app).post(`/api/agents/${agentId}/avatar/${mediaId}`).set(auth);

  it('takes a ready image of an assigned tenant’s site, which then cannot be deleted without force', async () => {
    const agent = await newAgent({ name: 'Pictured' }, [a.tenant.id]);
    const image = await mediaRow(t, a.site);
    const res = await avatar(agent.id, image).expect(200);
    expect(res.body).toMatchObject({ id: agent.id, avatar_media_id: image });

    const refused = await request(t.app).delete(`/${a.site.slug}/media/${image}`).set(a.admin.auth).expect(409);
    expect(refused.body.references).toEqual([
      { media_id: image, type: 'agent', id: agent.id, detail: 'agent Pictured (avatar)' },
    ]);
    await request(t.app).delete(`/${a.site.slug}/media/${image}?force=true`).set(a.admin.auth).expect(204);
    expect((await request(t.app).get(`/api/agents/${agent.id}`).set(admin.auth)).body.avatar_media_id).toBeNull();
  });

  it('refuses what is not a ready image of an assigned tenant’s site, or does not exist', async () => {
    const agent = await newAgent({ name: 'Choosy' }, [a.tenant.id]);
    await avatar(agent.id, await mediaRow(t, a.site, 'audio')).expect(409);
    const processing = await mediaRow(t, a.site);
    await t.services.db.query(
      sql.typeAlias('void')`update media_items set status = 'processing' where id = ${processing}`,
    );
    await avatar(agent.id, processing).expect(409);
    await avatar(agent.id, await mediaRow(t, b.site)).expect(409);
    await avatar(agent.id, missing).expect(404);
    await avatar(agent.id, 'nope').expect(422);
    expect((await request(t.app).get(`/api/agents/${agent.id}`).set(admin.auth)).body.avatar_media_id).toBeNull();
  });

  it('is for global administrators: 403 for members who see the agent, 404 for others', async () => {
    const agent = await newAgent({ name: 'Untouchable' }, [a.tenant.id]);
    const image = await mediaRow(t, a.site);
    await avatar(agent.id, image, a.admin.auth).expect(403);
    await avatar(agent.id, image, b.admin.auth).expect(404);
    await request(t.app).post(`/api/agents/${agent.id}/avatar/${image}`).expect(401);
  });

  it('goes when the agent leaves the tenant it came from, or is removed with PATCH', async () => {
    const agent = await newAgent({ name: 'Mover' }, [a.tenant.id, b.tenant.id]);
    await avatar(agent.id, await mediaRow(t, b.site)).expect(200);
    await request(t.app).delete(`/api/agents/${agent.id}/tenants/${a.tenant.id}`).set(admin.auth).expect(204);
    expect((await request(t.app).get(`/api/agents/${agent.id}`).set(admin.auth)).body.avatar_media_id).not.toBeNull();
    await request(t.app).delete(`/api/agents/${agent.id}/tenants/${b.tenant.id}`).set(admin.auth).expect(204);
    expect((await request(t.app).get(`/api/agents/${agent.id}`).set(admin.auth)).body.avatar_media_id).toBeNull();

    const other = await newAgent({ name: 'Plain' }, [a.tenant.id]);
    await avatar(other.id, await mediaRow(t, a.site)).expect(200);
    const cleared = await request(t.app)
      .patch(`/api/agents/${other.id}`)
      .set(admin.auth)
      .send({ avatar_media_id: null })
      .expect(200);
    expect(cleared.body.avatar_media_id).toBeNull();
  });
});
