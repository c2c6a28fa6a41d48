// Agents for the knowledge-base tests, made with SQL (the agents endpoints are
// another area's): an agent assigned to the tenants given, and posts to put
// in its knowledge base.
import { z } from 'zod';
import type { Site } from '../../core/tenancy/sites.ts';
import type { Tenant } from '../../core/tenancy/tenants.ts';
import { sql } from '../../db/pool.ts';
import type { TestApp } from './app.ts';
import { unique } from './identity.ts';

const idOnly = z.object({ id: z.uuid() });

/** An agent assigned to `tenants`. */
export async function newAgent(t: TestApp, tenants: Pick<Tenant, 'id'>[], name = `Agent ${unique()}`): Promise<string> {
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
