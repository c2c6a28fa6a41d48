// Changing a content type. Its name and description change freely; a change
// of its fields is checked against every element of the type first (drafts by
// the draft rules, published elements by every rule, translations for their
// localized fields), and refused with 409, naming how many elements and the
// first ones, when any would no longer be valid. An additive change (a new
// optional field, a relaxed rule) passes that check by nature. Elements that
// pass are recorded as validated against the new version.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem } from '../errors.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { checkData, type FoundId } from './data.ts';
import type { Field } from './fields.ts';
import { targetProblems } from './links.ts';
import { findType, requireValidFields, requireVersion, typeColumns, type ContentType, type IfMatch } from './types.ts';

const batchSize = 500;
const shown = 20;

const elementRow = z.object({
  id: z.uuid(),
  data: z.record(z.string(), z.unknown()),
  status: z.string(),
  master_id: z.uuid().nullable(),
  created_at: z.string(),
});

type Misfit = { element_id: string; path: string; message: string };

export type TypeChanges = { name?: string | undefined; description?: string | undefined; fields?: Field[] | undefined };

export async function updateType(
  db: CommonQueryMethods,
  { site }: Pick<SiteAccess, 'site'>,
  id: string,
  changes: TypeChanges,
  ifMatch?: IfMatch,
): Promise<ContentType> {
  return db.transaction(async (tx) => {
    const type = await findType(tx, site.id, id, true);
    requireVersion(type.version, ifMatch, 'content type');
    const fields = changes.fields;
    const changed = fields !== undefined && JSON.stringify(fields) !== JSON.stringify(type.fields);
    if (changed) {
      await requireValidFields(tx, site.id, fields, type.api_id);
      await requireElementsFit(tx, type, fields);
    }
    const updated = (await tx.one(sql.type(z.object({}).loose())`
      update content_types ct set
        name = coalesce(${changes.name ?? null}, ct.name),
        description = coalesce(${changes.description ?? null}, ct.description),
        fields = ${changed ? sql.jsonb(fields as never) : sql.fragment`ct.fields`},
        version = ct.version + ${changed ? 1 : 0}
      where ct.id = ${id}
      returning ${typeColumns}`)) as ContentType;
    if (changed)
      await tx.query(sql.typeAlias('void')`
        update content_elements set schema_version = ${updated.version} where type_id = ${id}`);
    return updated;
  });
}

/** 409 when an element of the type would not satisfy `fields`. */
async function requireElementsFit(db: CommonQueryMethods, type: ContentType, fields: Field[]): Promise<void> {
  const misfits: Misfit[] = [];
  let misfitCount = 0;
  let position: { created_at: string; id: string } | undefined;
  for (;;) {
    const rows = await db.any(sql.type(elementRow)`
      select id, data, status, master_id, created_at from content_elements
      where type_id = ${type.id}
        ${position ? sql.fragment`and (created_at, id) > (${position.created_at}::timestamptz, ${position.id}::uuid)` : sql.fragment``}
      order by created_at, id limit ${batchSize}`);
    if (rows.length === 0) break;
    const failing = new Map<string, Misfit>();
    const media: FoundId[] = [];
    const references: FoundId[] = [];
    for (const row of rows) {
      const checked = checkData(fields, row.data, row.status === 'published' ? 'publish' : 'draft', {
        localizedOnly: row.master_id !== null,
      });
      const first = checked.issues[0];
      if (first) failing.set(row.id, { element_id: row.id, ...first });
      // Tagged with the element, so a target's problem can be told back to it.
      media.push(...checked.media.map((found) => ({ ...found, path: `${row.id} ${found.path}` })));
      references.push(...checked.references.map((found) => ({ ...found, path: `${row.id} ${found.path}` })));
    }
    for (const issue of await targetProblems(db, type.site_id, { media, references })) {
      const [elementId, path] = issue.path.split(' ') as [string, string];
      if (!failing.has(elementId)) failing.set(elementId, { element_id: elementId, path, message: issue.message });
    }
    misfitCount += failing.size;
    misfits.push(...[...failing.values()].slice(0, shown - misfits.length));
    const last = rows.at(-1)!;
    position = { created_at: last.created_at, id: last.id };
  }
  misfitCount += await uniqueMisfits(db, type, fields, misfits);
  if (misfitCount > 0)
    throw new Problem(
      409,
      `${misfitCount} element(s) of the type would not satisfy the new fields; change them first, or make the change additive.`,
      {
        type: '/problems/schema-change-conflict',
        title: 'Elements do not fit the change',
        extensions: {
          element_count: misfitCount,
          element_ids: [...new Set(misfits.map((misfit) => misfit.element_id))],
          problems: misfits,
        },
      },
    );
}

/** Fields made unique whose values repeat among the type's elements (per locale): the later holders. */
async function uniqueMisfits(db: CommonQueryMethods, type: ContentType, fields: Field[], misfits: Misfit[]) {
  const before = new Set(type.fields.filter((field) => field.unique).map((field) => field.id));
  let count = 0;
  for (const field of fields.filter((candidate) => candidate.unique && !before.has(candidate.id))) {
    const repeated = await db.anyFirst(sql.type(z.object({ id: z.uuid() }))`
      select id from (
        select id, row_number() over (partition by locale, data -> ${field.id} order by created_at, id) as nth
        from content_elements where type_id = ${type.id} and data -> ${field.id} is not null
          and data -> ${field.id} <> 'null'::jsonb
      ) as ranked where nth > 1`);
    count += repeated.length;
    for (const id of repeated.slice(0, shown - misfits.length))
      misfits.push({ element_id: id, path: `data.${field.id}`, message: 'repeats a value the field now needs unique' });
  }
  return count;
}
