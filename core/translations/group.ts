// Reading a group (a master and its translations) with, for each member, its
// localized values and their hashes as the database computes them
// (`translation_localized` of db/migrations/0025, which its triggers use too,
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
export type TableKind<Item> = {
  kind: 'elements' | 'pages' | 'posts';
  table: 'content_elements' | 'pages' | 'posts';
  noun: string;
  /** How the kind reads its rows: its schema, and its columns over `alias`. */
  schema: z.ZodType<Item>;
  columns: ReturnType<typeof sql.fragment>;
  alias: 'e' | 'p';
};

/** The group `id` belongs to, the master first: its members by id, then by master_id (two index lookups), then their rows. */
export async function tableGroup<Item extends { id: string }>(
  db: CommonQueryMethods,
  kind: TableKind<Item>,
  siteId: string,
  id: string,
): Promise<Group<Item>> {
  const table = sql.identifier([kind.table]);
  const rows = await db.any(sql.type(memberRow)`
    with grp (id) as (select coalesce(x.master_id, x.id) from ${table} x where x.id = ${id} and x.site_id = ${siteId})
    select x.id, x.master_id, x.locale, x.status, x.updated_at, translation_localized(${kind.kind}, to_jsonb(x)) as values,
           translation_hashes(translation_localized(${kind.kind}, to_jsonb(x))) as hashes, coalesce(s.fields, '{}') as taken
    from ${table} x join grp on x.id = grp.id or x.master_id = grp.id
    left join translation_states s on s.translation_id = x.id
    order by x.master_id nulls first, x.locale`);
  if (!rows.length || rows[0]!.master_id !== null) throw notFound(`No such ${kind.noun}.`);
  const items = await db.any(sql.type(kind.schema)`
    select ${kind.columns} from ${table} ${sql.identifier([kind.alias])}
    where ${sql.identifier([kind.alias, 'id'])} = any(${sql.array(
      rows.map((row) => row.id),
      'uuid',
    )})`);
  return groupOf(rows, items);
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
