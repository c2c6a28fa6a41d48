// Where a content type sits among the others (what it refers to, what refers
// to it), and copies of it: within its site under a new api_id, to another
// site of its tenant, or by global administrators to many sites at once
// (core/content/type-distribution.ts). A copy never leaves a reference
// dangling: a type it refers to is mapped to the target's type of the same
// api_id, or copied along when the target has none.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorUserId, type Actor } from '../actor.ts';
import { Problem, conflict } from '../errors.ts';
import { findSiteAccess, requireSiteNeed, type SiteAccess } from '../tenancy/site-access.ts';
import type { Site } from '../tenancy/sites.ts';
import { referencedTypes, type Field } from './fields.ts';
import { findType, insertType, namesType, typeColumns, type ContentType } from './types.ts';

const typeRef = z.object({ id: z.uuid(), api_id: z.string(), name: z.string() });

export const dependenciesSchema = z
  .object({
    refers_to: z
      .array(typeRef.extend({ id: z.uuid().nullable(), name: z.string().nullable() }))
      .describe('Types its reference fields allow (id null: named but missing)'),
    referred_by: z.object({
      types: z.array(typeRef).describe('Types whose reference fields allow this one'),
      element_count: z.number().int().describe('Elements of this type'),
      referring_element_count: z.number().int().describe('Elements (of any type) whose data refers to one of them'),
      page_count: z.number().int().describe('Pages that place one of its elements'),
    }),
  })
  .meta({ id: 'ContentTypeDependencies' });

export async function typeDependencies(db: CommonQueryMethods, { site }: SiteAccess, id: string) {
  const type = await findType(db, site.id, id);
  const named = referencedTypes(type.fields);
  const found = await db.any(sql.type(typeRef)`
    select id, api_id, name from content_types where site_id = ${site.id} and api_id = any(${sql.array(named, 'text')})`);
  const byApiId = new Map(found.map((row) => [row.api_id, row]));
  const referredBy = await db.one(sql.type(dependenciesSchema.shape.referred_by)`
    select
      coalesce((select json_agg(json_build_object('id', other.id, 'api_id', other.api_id, 'name', other.name) order by other.api_id)
                from content_types other where other.site_id = ${site.id} and other.id <> ${id}
                and ${namesType(sql.identifier(['other', 'fields']), type.api_id)}), '[]') as types,
      (select count(*)::int from content_elements where type_id = ${id}) as element_count,
      (select count(distinct l.element_id)::int from content_element_links l
         join content_elements e on e.id = l.target_id where e.type_id = ${id}) as referring_element_count,
      (select count(distinct pe.page_id)::int from page_elements pe
         join content_elements e on e.id = pe.element_id where e.type_id = ${id}) as page_count`);
  return {
    refers_to: named.map((apiId) => byApiId.get(apiId) ?? { id: null, api_id: apiId, name: null }),
    referred_by: referredBy,
  };
}

export const copyResultSchema = z
  .object({
    site_id: z.uuid(),
    status: z.enum(['created', 'exists', 'failed']),
    type_id: z.uuid().nullable().describe('The copy, or the type already there with the api_id'),
    copied_along: z.array(z.object({ id: z.uuid(), api_id: z.string() })).describe('Referred types copied with it'),
    mapped: z.array(z.string()).describe('Referred types the target had already (by api_id)'),
    detail: z.string().optional(),
  })
  .meta({ id: 'ContentTypeCopyResult' });

export type CopyResult = z.infer<typeof copyResultSchema>;

const existing = (db: CommonQueryMethods, siteId: string, apiIds: string[]) =>
  db.any(sql.type(z.object({ id: z.uuid(), api_id: z.string() }))`
    select id, api_id from content_types where site_id = ${siteId} and api_id = any(${sql.array(apiIds, 'text')})`);

/**
 * Copies `type` into `target` as `apiId`, with every type it refers to
 * (transitively) that the target lacks. In the caller's transaction.
 */
export async function copyInto(
  db: CommonQueryMethods,
  type: ContentType,
  target: Site,
  apiId: string,
  name: string,
  createdBy: string | null,
): Promise<CopyResult> {
  const [already] = await existing(db, target.id, [apiId]);
  if (already)
    return {
      site_id: target.id,
      status: 'exists',
      type_id: already.id,
      copied_along: [],
      mapped: [],
      detail: `The site already has a content type ${apiId}.`,
    };
  const copy = await insertType(db, target, { ...type, api_id: apiId, name }, createdBy);
  const along =
    target.id === type.site_id
      ? { copied_along: [], mapped: [] }
      : await copyReferredTypes(db, type.site_id, type.fields, target, [type.api_id, apiId], createdBy);
  return { site_id: target.id, status: 'created', type_id: copy.id, ...along };
}

/**
 * The types `fields` refer to (transitively) that `target` lacks, copied from
 * the source site; those it has already are mapped by api_id. `seen` names
 * the types not to copy (the one being copied or changed). In the caller's
 * transaction.
 */
export async function copyReferredTypes(
  db: CommonQueryMethods,
  sourceSiteId: string,
  fields: Field[],
  target: Site,
  seen: string[],
  createdBy: string | null,
): Promise<Pick<CopyResult, 'copied_along' | 'mapped'>> {
  const copiedAlong: { id: string; api_id: string }[] = [];
  const mapped = new Set<string>();
  const done = new Set(seen);
  let wanted = referencedTypes(fields).filter((name) => !done.has(name));
  while (wanted.length) {
    wanted.forEach((name) => done.add(name));
    const there = new Set((await existing(db, target.id, wanted)).map((row) => row.api_id));
    there.forEach((name) => mapped.add(name));
    const sources = await db.any(sql.type(z.object({}).loose())`
      select ${typeColumns} from content_types ct
      where ct.site_id = ${sourceSiteId} and ct.api_id = any(${sql.array(
        wanted.filter((name) => !there.has(name)),
        'text',
      )})`);
    const next: string[] = [];
    for (const source of sources as unknown as ContentType[]) {
      const along = await insertType(db, target, source, createdBy);
      copiedAlong.push({ id: along.id, api_id: along.api_id });
      next.push(...referencedTypes(source.fields).filter((name) => !done.has(name)));
    }
    wanted = [...new Set(next)];
  }
  return { copied_along: copiedAlong, mapped: [...mapped] };
}

export type CopyInput = { api_id?: string | undefined; name?: string | undefined; target_site?: string | undefined };

/** A copy in the same site (a new api_id needed) or in another site of the tenant the caller manages. */
export async function copyType(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  input: CopyInput,
): Promise<{ type: ContentType; result: CopyResult }> {
  return db.transaction(async (tx) => {
    const type = await findType(tx, access.site.id, id);
    const target = input.target_site ? await targetSite(tx, access.actor, input.target_site, access.site) : access.site;
    const apiId = input.api_id ?? type.api_id;
    if (target.id === access.site.id && apiId === type.api_id)
      throw new Problem(422, 'A copy in the same site needs a new api_id.', {
        errors: [{ path: 'body.api_id', message: 'must differ from the original’s in the same site' }],
      });
    const result = await copyInto(tx, type, target, apiId, input.name ?? type.name, actorUserId(access.actor));
    if (result.status === 'exists') throw conflict(`The target site already has a content type ${apiId}.`);
    return { type: await findType(tx, target.id, result.type_id!), result };
  });
}

/** The target of a copy: a site of the same tenant the caller manages (422 at target_site otherwise). */
async function targetSite(db: CommonQueryMethods, actor: Actor, identifier: string, source: Site): Promise<Site> {
  const found = await findSiteAccess(db, actor, identifier);
  if (!found || found.site.tenant_id !== source.tenant_id)
    throw new Problem(422, 'The target site is not a site of the same tenant that you reach.', {
      errors: [{ path: 'body.target_site', message: 'is not a site of the tenant that you reach' }],
    });
  return requireSiteNeed(found, { site: 'manage', scope: 'content:write' }).site;
}
