// Global administrators give many sites the same content type at once. A site
// without it gets a copy (core/content/type-copies.ts); a site that has a type
// of the same api_id gets the source's fields it lacks and the source's
// version of the fields both have, as an edit of that site's type
// (updateType: the same checks against its elements, the same version bump),
// so a change its elements would fail is refused for that site alone. Fields
// only the site has stay: distributing adds and changes, never removes.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorUserId, type Actor } from '../actor.ts';
import { Problem, notFound } from '../errors.ts';
import { siteColumns, siteSchema, type Site } from '../tenancy/sites.ts';
import type { Field } from './fields.ts';
import { updateType } from './type-changes.ts';
import { copyInto, copyReferredTypes } from './type-copies.ts';
import { findType, type ContentType } from './types.ts';

const reasonSchema = z.object({
  path: z.string(),
  message: z.string(),
  element_id: z.uuid().optional().describe('The element that would fail the change'),
});

export const distributionResultSchema = z
  .object({
    site_id: z.uuid(),
    status: z
      .enum(['created', 'updated', 'unchanged', 'refused', 'failed'])
      .describe(
        '`created`: the site lacked the type and has a copy; `updated`: its type got the fields in `fields_added` and ' +
          '`fields_changed`; `unchanged`: it has every field as the source has it; `refused`: the change would fail its ' +
          'elements or its schema (`reasons`), nothing applied; `failed`: no such site, or another error (`detail`)',
      ),
    type_id: z.uuid().nullable().describe('The site’s type with the api_id (the copy, or the one it had)'),
    version: z.number().int().nullable().describe('The site’s type’s version after the distribution'),
    fields_added: z.array(z.string()).describe('Ids of the fields the site’s type got'),
    fields_changed: z.array(z.string()).describe('Ids of the fields now as the source has them'),
    copied_along: z.array(z.object({ id: z.uuid(), api_id: z.string() })).describe('Referred types copied with it'),
    mapped: z.array(z.string()).describe('Referred types the target had already (by api_id)'),
    reasons: z
      .array(reasonSchema)
      .describe('Why a change was refused: the first elements that would fail it, or the schema’s problems'),
    element_count: z.number().int().optional().describe('Refused: how many elements would fail the change'),
    detail: z.string().optional(),
  })
  .meta({ id: 'ContentTypeDistributionResult' });

export type DistributionResult = z.infer<typeof distributionResultSchema>;

const blank = {
  type_id: null,
  version: null,
  fields_added: [],
  fields_changed: [],
  copied_along: [],
  mapped: [],
  reasons: [],
};

/** Key order aside (jsonb keeps its own), whether two fields are the same. */
const canonical = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    inner && typeof inner === 'object' && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => a.localeCompare(b)))
      : inner,
  );

/** The site's fields with the source's brought in: changed in place, new ones after, its own kept. */
export function mergedFields(mine: Field[], source: Field[]) {
  const sourceById = new Map(source.map((field) => [field.id, field]));
  const changed: string[] = [];
  const fields = mine.map((field) => {
    const theirs = sourceById.get(field.id);
    if (!theirs || canonical(theirs) === canonical(field)) return field;
    changed.push(field.id);
    return theirs;
  });
  const have = new Set(mine.map((field) => field.id));
  const added = source.filter((field) => !have.has(field.id));
  return { fields: [...fields, ...added], added: added.map((field) => field.id), changed };
}

/** A refusal of the edit (409: elements would fail; 422: the schema would not hold in that site) as reasons. */
function refusal(siteId: string, typeId: string, version: number, error: Problem): DistributionResult {
  const problems = (error.extensions.problems ?? error.errors ?? []) as z.infer<typeof reasonSchema>[];
  const count = error.extensions.element_count;
  return {
    ...blank,
    site_id: siteId,
    status: 'refused',
    type_id: typeId,
    version,
    reasons: problems.map(({ path, message, element_id }) => ({
      path: path.replace(/^body\./, ''),
      message,
      ...(element_id ? { element_id } : {}),
    })),
    ...(typeof count === 'number' ? { element_count: count } : {}),
    detail: error.message,
  };
}

/** One site's part, in the caller's savepoint: a refusal throws nothing, it rolls the savepoint back itself. */
async function distributeTo(
  db: CommonQueryMethods,
  type: ContentType,
  site: Site,
  createdBy: string | null,
): Promise<DistributionResult> {
  const mine = await db.maybeOne(sql.type(z.object({ id: z.uuid() }))`
    select id from content_types where site_id = ${site.id} and api_id = ${type.api_id}`);
  if (!mine) {
    const copy = await copyInto(db, type, site, type.api_id, type.name, createdBy);
    return { ...blank, ...copy, status: 'created', version: 1, detail: undefined };
  }
  const current = await findType(db, site.id, mine.id);
  const merged = mergedFields(current.fields, type.fields);
  const base = { ...blank, site_id: site.id, type_id: current.id, version: current.version };
  if (merged.added.length === 0 && merged.changed.length === 0) return { ...base, status: 'unchanged' };
  try {
    return await db.transaction(async (savepoint) => {
      const along = await copyReferredTypes(savepoint, type.site_id, merged.fields, site, [type.api_id], createdBy);
      const updated = await updateType(savepoint, { site }, current.id, { fields: merged.fields });
      return {
        ...base,
        ...along,
        status: 'updated' as const,
        version: updated.version,
        fields_added: merged.added,
        fields_changed: merged.changed,
      };
    });
  } catch (error) {
    if (error instanceof Problem && (error.status === 409 || error.status === 422))
      return refusal(site.id, current.id, current.version, error);
    throw error;
  }
}

export type DistributeInput = { type_id: string; site_ids?: string[] | undefined; tenant_ids?: string[] | undefined };

/**
 * The type brought to every site named and every site of the tenants named,
 * each in its own savepoint, so one site's failure or refusal stops no other.
 */
export async function distributeType(db: CommonQueryMethods, actor: Actor, input: DistributeInput) {
  return db.transaction(async (tx) => {
    const source = await tx.maybeOne(sql.type(z.object({ site_id: z.uuid() }))`
      select site_id from content_types where id = ${input.type_id}`);
    if (!source) throw notFound('No such content type.');
    const type = await findType(tx, source.site_id, input.type_id);
    const sites = await tx.any(sql.type(siteSchema)`
      select ${siteColumns} from sites
      where (id = any(${sql.array(input.site_ids ?? [], 'uuid')}) or tenant_id = any(${sql.array(input.tenant_ids ?? [], 'uuid')}))
        and id <> ${type.site_id}
      order by created_at, id`);
    const found = new Set(sites.map((site) => site.id));
    const results: DistributionResult[] = (input.site_ids ?? [])
      .filter((siteId) => !found.has(siteId) && siteId !== type.site_id)
      .map((siteId) => ({ ...blank, site_id: siteId, status: 'failed' as const, detail: 'No such site.' }));
    for (const site of sites) {
      try {
        results.push(await tx.transaction((savepoint) => distributeTo(savepoint, type, site, actorUserId(actor))));
      } catch (error) {
        results.push({ ...blank, site_id: site.id, status: 'failed', detail: (error as Error).message });
      }
    }
    const count = (status: DistributionResult['status']) => results.filter((result) => result.status === status).length;
    return {
      type_id: type.id,
      api_id: type.api_id,
      version: type.version,
      created: count('created'),
      updated: count('updated'),
      unchanged: count('unchanged'),
      refused: count('refused'),
      results,
    };
  });
}
