// Reading a group (a master and its translations) with, for each member, its
// localized values and their hashes as the database computes them (the
// `*_localized` functions of db/migrations/0025, which the triggers use too,
// so a hash compared here is a hash recorded there), and what each
// translation last took from the master.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { notFound } from '../errors.ts';
import { timestamp } from '../timestamp.ts';
import { takenSources, type Group, type Member } from './model.ts';

const takenSchema = z.object({ hash: z.string(), source: z.enum(takenSources), taken_at: z.string() });

export const memberRow = z.object({
  id: z.uuid(),
  master_id: z.uuid().nullable(),
  locale: z.string(),
  status: z.string().nullable(),
  updated_at: timestamp,
  values: z.record(z.string(), z.unknown()),
  hashes: z.record(z.string(), z.string()),
  taken: z.record(z.string(), takenSchema),
});
export type MemberRow = z.infer<typeof memberRow>;

/** A kind whose translations are rows of its own table with master_id (elements, pages, posts). */
export type TableKind = {
  table: 'content_elements' | 'pages' | 'posts';
  /** The SQL function giving a row's localized values. */
  localized: 'element_localized' | 'page_localized' | 'post_localized';
  noun: string;
};

/** The members of the group `id` belongs to, the master first: by id, then by master_id (two index lookups). */
export async function tableMembers(
  db: CommonQueryMethods,
  kind: TableKind,
  siteId: string,
  id: string,
): Promise<MemberRow[]> {
  const table = sql.identifier([kind.table]);
  const localized = sql.identifier([kind.localized]);
  const rows = await db.any(sql.type(memberRow)`
    with grp (id) as (select coalesce(x.master_id, x.id) from ${table} x where x.id = ${id} and x.site_id = ${siteId})
    select x.id, x.master_id, x.locale, x.status, x.updated_at, ${localized}(x) as values,
           translation_hashes(${localized}(x)) as hashes, coalesce(s.fields, '{}') as taken
    from ${table} x join grp on x.id = grp.id or x.master_id = grp.id
    left join translation_states s on s.translation_id = x.id
    order by x.master_id nulls first, x.locale`);
  if (!rows.length || rows[0]!.master_id !== null) throw notFound(`No such ${kind.noun}.`);
  return [...rows];
}

/** Pairs member rows with the kind's items (read by id), into a group. */
export function groupOf<Item extends { id: string }>(
  rows: readonly MemberRow[],
  items: readonly Item[],
  locale: (row: MemberRow) => string = (row) => row.locale,
): Group<Item> {
  const byId = new Map(items.map((item) => [item.id, item]));
  const members = rows.map((row): Member<Item> => ({
    id: row.id,
    locale: locale(row),
    status: row.status,
    updated_at: row.updated_at,
    values: row.values,
    hashes: row.hashes,
    taken: row.taken,
    item: byId.get(row.id)!,
  }));
  return { master: members[0]!, translations: members.slice(1) };
}

/** The member rows' ids, for reading the items. */
export const idsOf = (rows: readonly MemberRow[]) =>
  sql.array(
    rows.map((row) => row.id),
    'uuid',
  );

/** Records that `fields` of a translation took the master's values hashing to `hashes` (db/migrations/0025). */
export async function recordTaken(
  db: CommonQueryMethods,
  target: { kind: string; translationId: string; tenantId: string; siteId: string },
  hashes: Record<string, string>,
  fields: readonly string[],
  source: 'machine' | 'copy',
): Promise<void> {
  if (!fields.length) return;
  await db.query(sql.typeAlias('void')`
    select from record_taken(${target.translationId}, ${target.kind}, ${target.tenantId}, ${target.siteId},
                        ${sql.jsonb(hashes)}, ${sql.array([...fields], 'text')}, ${source})`);
}
