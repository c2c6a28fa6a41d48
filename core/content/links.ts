// What an element's data points at, checked against the database and kept
// beside the element: media items of the site (of the kinds a field allows),
// elements of the site (of the types it allows), and values that must be
// unique in the type. The link rows make "what uses this element or this
// media item" an index lookup.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { CheckedData, DataIssue } from './data.ts';

const mediaRow = z.object({ id: z.uuid(), kind: z.string() });
const elementRow = z.object({ id: z.uuid(), api_id: z.string() });

/** Problems with the ids the data names: not of the site, or of a kind or type the field does not allow. */
export async function targetProblems(
  db: CommonQueryMethods,
  siteId: string,
  checked: Pick<CheckedData, 'media' | 'references'>,
): Promise<DataIssue[]> {
  const issues: DataIssue[] = [];
  if (checked.media.length) {
    const ids = [...new Set(checked.media.map((found) => found.id))];
    const rows = await db.any(sql.type(mediaRow)`
      select id, kind from media_items where id = any(${sql.array(ids, 'uuid')}) and site_id = ${siteId}`);
    const kinds = new Map(rows.map((row) => [row.id, row.kind]));
    for (const found of checked.media) {
      const kind = kinds.get(found.id);
      if (!kind) issues.push({ path: found.path, message: 'is not a media item of the site' });
      else if (found.kinds && !found.kinds.includes(kind))
        issues.push({ path: found.path, message: `must be a media item of kind ${found.kinds.join(' or ')}` });
    }
  }
  if (checked.references.length) {
    const ids = [...new Set(checked.references.map((found) => found.id))];
    const rows = await db.any(sql.type(elementRow)`
      select e.id, t.api_id from content_elements e join content_types t on t.id = e.type_id
      where e.id = any(${sql.array(ids, 'uuid')}) and e.site_id = ${siteId}`);
    const types = new Map(rows.map((row) => [row.id, row.api_id]));
    for (const found of checked.references) {
      const apiId = types.get(found.id);
      if (!apiId) issues.push({ path: found.path, message: 'is not an element of the site' });
      else if (found.types && !found.types.includes(apiId))
        issues.push({ path: found.path, message: `must be an element of type ${found.types.join(' or ')}` });
    }
  }
  return issues;
}

/** Values of unique fields already held by another element of the type in the same locale. */
export async function uniqueProblems(
  db: CommonQueryMethods,
  typeId: string,
  locale: string,
  checked: Pick<CheckedData, 'uniques'>,
  selfId: string | null,
): Promise<DataIssue[]> {
  const issues: DataIssue[] = [];
  for (const { field, value } of checked.uniques) {
    const taken = await db.exists(sql.type(z.object({}))`
      select 1 from content_elements
      where type_id = ${typeId} and locale = ${locale} and id is distinct from ${selfId}
        and data -> ${field.id} = ${JSON.stringify(value)}::jsonb`);
    if (taken)
      issues.push({
        path: `data.${field.id}`,
        message: field.validations?.message ?? 'is already used by another element of the type',
      });
  }
  return issues;
}

/** Where each kind of id is kept, and the column that holds it. */
const linkTables = [
  { table: 'content_element_links', column: 'target_id', found: 'references' },
  { table: 'content_element_media', column: 'media_id', found: 'media' },
] as const;

/** Replaces the element's link rows with what its data names now. */
export async function saveLinks(
  db: CommonQueryMethods,
  elementId: string,
  siteId: string,
  checked: Pick<CheckedData, 'media' | 'references'>,
): Promise<void> {
  for (const { table, column, found } of linkTables) {
    await db.query(sql.typeAlias('void')`delete from ${sql.identifier([table])} where element_id = ${elementId}`);
    const ids = checked[found];
    if (ids.length === 0) continue;
    await db.query(sql.typeAlias('void')`
      insert into ${sql.identifier([table])} (element_id, path, ${sql.identifier([column])}, site_id)
      select ${elementId}, path, id, ${siteId}
      from unnest(${sql.array(
        ids.map((entry) => entry.path),
        'text',
      )}::text[], ${sql.array(
        ids.map((entry) => entry.id),
        'uuid',
      )}::uuid[]) as found (path, id)`);
  }
}
