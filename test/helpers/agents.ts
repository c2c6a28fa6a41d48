// Agents in tests: made and assigned through HTTP by a global administrator,
// or written as rows for the knowledge-base tests; posts to put in a
// knowledge base.
import request from 'supertest';
import { z } from 'zod';
import type { Site } from '../../core/tenancy/sites.ts';
import type { Tenant } from '../../core/tenancy/tenants.ts';
import { sql } from '../../db/pool.ts';
import type { TestApp } from './app.ts';
import type { Caller } from './factories.ts';
import { unique } from './identity.ts';

export type AgentBody = { id: string; name: string; tools: string[]; avatar_media_id: string | null; status: string };

/** An agent made by `admin` with `body` (a name by default), assigned to `tenants`. */
export async function newAgent(
  t: TestApp,
  admin: Caller,
  body: Record<string, unknown> = {},
  tenants: string[] = [],
): Promise<AgentBody> {
  const res = await request(t.app)
    .post('/api/agents')
    .set(admin.auth)
    .send({ name: 'Helper', ...body })
    .expect(201);
  for (const tenant of tenants) {
    await request(t.app).post(`/api/agents/${res.body.id}/tenants/${tenant}`).set(admin.auth).expect(201);
  }
  return res.body as AgentBody;
}

const idOnly = z.object({ id: z.uuid() });

/** An agent assigned to `tenants`, written as rows (for tests of what hangs off agents). */
export async function agentRow(t: TestApp, tenants: Pick<Tenant, 'id'>[], name = `Agent ${unique()}`): Promise<string> {
  const id = await t.services.db.oneFirst(sql.type(idOnly)`insert into agents (name) values (${name}) returning id`);
  for (const tenant of tenants)
    await t.services.db.query(sql.typeAlias('void')`
      insert into agent_tenants (agent_id, tenant_id) values (${id}, ${tenant.id})`);
  return id;
}

/** A draft post of the site, in Markdown unless said otherwise. */
export async function newPostRow(
  t: TestApp,
  site: Site,
  fields: { title?: string; body?: string; excerpt?: string; format?: 'markdown' | 'html'; locale?: string } = {},
): Promise<string> {
  return t.services.db.oneFirst(sql.type(idOnly)`
    insert into posts (tenant_id, site_id, title, slug, excerpt, body, body_format, locale)
    values (${site.tenant_id}, ${site.id}, ${fields.title ?? `Post ${unique()}`}, ${`post-${unique()}`},
            ${fields.excerpt ?? ''}, ${fields.body ?? 'A short body.'}, ${fields.format ?? 'markdown'},
            ${fields.locale ?? site.default_locale})
    returning id`);
}
