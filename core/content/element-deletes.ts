// Deleting elements. An element (with its translations) that pages place or
// other elements refer to is not deleted: 409 names what uses it. A forced
// delete removes every use in the same transaction: the page slots, and the
// values in other elements' data (a single reference becomes null, an entry
// of a list leaves the list), so nothing is left pointing at nothing.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem } from '../errors.ts';
import { requireOwnChange } from '../media/access.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { checkData } from './data.ts';
import { findElement } from './elements.ts';
import { saveLinks } from './links.ts';
import type { Field } from './fields.ts';

export const elementReferenceSchema = z
  .object({
    kind: z.enum(['page', 'element']),
    id: z.uuid(),
    title: z.string().describe('The page’s title or the element’s name'),
    path: z.string().nullable().describe('Where in the element’s data (for elements), or the page’s area'),
    target_id: z.uuid().describe('The element used: this one or one of its translations'),
  })
  .meta({ id: 'ContentElementReference' });

export type ElementReference = z.infer<typeof elementReferenceSchema>;

/** The element and its translations. */
const group = (id: string) => sql.fragment`select id from content_elements where id = ${id} or master_id = ${id}`;

/** Pages that place the element (or a translation) and other elements whose data refers to them, at most `limit`. */
export async function elementReferences(
  db: CommonQueryMethods,
  id: string,
  limit = 100,
): Promise<readonly ElementReference[]> {
  return db.any(sql.type(elementReferenceSchema)`
    select * from (
      select 'page' as kind, p.id, p.title, pe.area as path, pe.element_id as target_id
      from page_elements pe join pages p on p.id = pe.page_id where pe.element_id in (${group(id)})
      union all
      select 'element', e.id, e.name, l.path, l.target_id
      from content_element_links l join content_elements e on e.id = l.element_id
      where l.target_id in (${group(id)}) and l.element_id not in (${group(id)})
    ) as found order by kind desc, title, id, path limit ${limit}`);
}

export async function deleteElement(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  force: boolean,
): Promise<void> {
  await db.transaction(async (tx) => {
    const element = await findElement(tx, access.site.id, id, true);
    requireOwnChange(access, element.created_by, 'the elements they made');
    const references = await elementReferences(tx, id, force ? 100_000 : 50);
    if (references.length && !force)
      throw new Problem(
        409,
        `In use by ${references.length} page(s) or element(s); use DELETE …/force to remove those uses with it.`,
        { type: '/problems/element-in-use', title: 'Element in use', extensions: { references } },
      );
    if (references.length) await removeUses(tx, id, references);
    await tx.query(sql.typeAlias('void')`delete from content_elements where master_id = ${id}`);
    await tx.query(sql.typeAlias('void')`delete from content_elements where id = ${id}`);
  });
}

const referringRow = z.object({
  id: z.uuid(),
  site_id: z.uuid(),
  data: z.record(z.string(), z.unknown()),
  master_id: z.uuid().nullable(),
  draft: z.record(z.string(), z.unknown()).nullable(),
  fields: z.array(z.any()),
});

/** Takes the element out of every page and every other element's data. */
async function removeUses(db: CommonQueryMethods, id: string, references: readonly ElementReference[]) {
  await db.query(sql.typeAlias('void')`delete from page_elements where element_id in (${group(id)})`);
  const targets = new Set(references.map((reference) => reference.target_id));
  const referring = [...new Set(references.filter((ref) => ref.kind === 'element').map((ref) => ref.id))];
  if (referring.length === 0) return;
  const rows = await db.any(sql.type(referringRow)`
    select e.id, e.site_id, e.data, e.master_id, e.draft, t.fields from content_elements e join content_types t on t.id = e.type_id
    where e.id = any(${sql.array(referring, 'uuid')}) for update of e`);
  for (const row of rows) {
    const data = withoutIds(row.data, targets);
    // The links are worked out again from what is left: list entries after a removed one moved up.
    const checked = checkData(row.fields as Field[], data, 'draft', { localizedOnly: row.master_id !== null });
    // A draft beside it loses the value too (drafts, issue 41), or its publication would name what is gone.
    const draft = row.draft
      ? { ...row.draft, data: withoutIds((row.draft.data ?? {}) as Record<string, unknown>, targets) }
      : null;
    await db.query(sql.typeAlias('void')`
      update content_elements set data = ${sql.jsonb(data as never)}, draft = ${draft ? sql.jsonb(draft as never) : null},
        version = version + 1
      where id = ${row.id}`);
    await saveLinks(db, row.id, row.site_id, checked);
  }
}

/** A copy of data without the ids: a value equal to one becomes null, a list entry equal to one leaves the list. */
function withoutIds(value: Record<string, unknown>, ids: Set<string>): Record<string, unknown> {
  const clean = (entry: unknown): unknown => {
    if (typeof entry === 'string') return ids.has(entry) ? null : entry;
    if (Array.isArray(entry)) return entry.filter((item) => !(typeof item === 'string' && ids.has(item))).map(clean);
    if (entry && typeof entry === 'object')
      return Object.fromEntries(Object.entries(entry).map(([key, inner]) => [key, clean(inner)]));
    return entry;
  };
  return clean(value) as Record<string, unknown>;
}
