// History of elements and pages (content_versions, migration 0058): a
// version is kept at every publish, every save and every restore, numbered
// per item from 1, with who made it and which fields differ from the version
// before. Saves are pruned after CONTENT_SAVE_VERSIONS_DAYS by the hourly
// cleanup (core/cleanup.ts); publishes and restores stay while the item does.
// `content` has the shape of the item's draft: {name, data, schema_version}
// for an element, {title, seo, template} for a page.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem, notFound } from '../errors.ts';
import { pageQuery } from '../pagination.ts';
import { timestamp } from '../timestamp.ts';

export type VersionedKind = 'element' | 'page';
export type VersionReason = 'publish' | 'save' | 'restore';

/** The fields a diff descends into, one level: an element's data, a page's seo. */
const nestedFields: Record<VersionedKind, string> = { element: 'data', page: 'seo' };

export const fieldChangeSchema = z
  .object({
    field: z.string().describe('`name`, `title`, `template`, or `data.<field>` / `seo.<key>`'),
    from: z.unknown().describe('The value on the left (absent: null)'),
    to: z.unknown().describe('The value on the right (absent: null)'),
  })
  .meta({ id: 'ContentFieldChange' });

export type FieldChange = { field: string; from: unknown; to: unknown };

export const versionSummarySchema = z
  .object({
    id: z.uuid(),
    number: z.number().int().describe('From 1, per element or page'),
    reason: z.enum(['publish', 'save', 'restore']),
    changed: z.array(z.string()).describe('The fields that differ from the version before (all, for the first)'),
    created_by: z.uuid().nullable().describe('Who made it; null for a scheduled publication'),
    created_at: timestamp,
  })
  .meta({ id: 'ContentVersionSummary' });

export const versionSchema = versionSummarySchema
  .extend({
    content: z
      .record(z.string(), z.unknown())
      .describe('Elements: {name, data, schema_version}; pages: {title, seo, template}'),
  })
  .meta({ id: 'ContentVersion' });

export type Version = z.infer<typeof versionSchema>;

export const versionListQuery = pageQuery.extend({
  reason: z.enum(['publish', 'save', 'restore']).optional(),
});

const ownerColumn = (kind: VersionedKind) => sql.identifier([kind === 'element' ? 'element_id' : 'page_id']);

/** A canonical JSON text: jsonb sorts keys, so a value read back must compare equal to the one written. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object')
    return `{${Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
      .join(',')}}`;
  return JSON.stringify(value ?? null);
}

function flatten(kind: VersionedKind, content: Record<string, unknown>): Map<string, unknown> {
  const flat = new Map<string, unknown>();
  for (const [key, value] of Object.entries(content)) {
    if (key === 'schema_version') continue;
    if (key === nestedFields[kind] && value && typeof value === 'object' && !Array.isArray(value))
      for (const [inner, innerValue] of Object.entries(value)) flat.set(`${key}.${inner}`, innerValue);
    else flat.set(key, value);
  }
  return flat;
}

/** The item's own fields first, in the order the API shows them; within data or seo, by name (jsonb keeps no order). */
const fieldOrder = ['name', 'title', 'data', 'seo', 'template'];
function byFieldOrder(a: string, b: string): number {
  const rank = (field: string) => fieldOrder.indexOf(field.split('.')[0]!);
  return rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0);
}

/** What differs between two contents of an item, field by field, in field order. */
export function diffContent(
  kind: VersionedKind,
  from: Record<string, unknown> | null,
  to: Record<string, unknown>,
): FieldChange[] {
  const left = flatten(kind, from ?? {});
  const right = flatten(kind, to);
  const fields = [...new Set([...left.keys(), ...right.keys()])].sort(byFieldOrder);
  return fields
    .filter((field) => canonical(left.get(field)) !== canonical(right.get(field)))
    .map((field) => ({ field, from: left.get(field) ?? null, to: right.get(field) ?? null }));
}

export type VersionTarget = { kind: VersionedKind; id: string; tenantId: string; siteId: string };

/** Keeps a version of the item; the caller holds the item's row lock, which orders the numbers. */
export async function recordVersion(
  db: CommonQueryMethods,
  target: VersionTarget,
  reason: VersionReason,
  content: Record<string, unknown>,
  userId: string | null,
): Promise<void> {
  const owner = ownerColumn(target.kind);
  const last = await db.maybeOne(sql.type(z.object({ number: z.number(), content: z.record(z.string(), z.unknown()) }))`
    select number, content from content_versions where ${owner} = ${target.id} order by number desc limit 1`);
  const changed = diffContent(target.kind, last?.content ?? null, content).map((change) => change.field);
  await db.query(sql.typeAlias('void')`
    insert into content_versions (tenant_id, site_id, ${owner}, number, reason, content, changed, created_by)
    values (${target.tenantId}, ${target.siteId}, ${target.id}, ${(last?.number ?? 0) + 1}, ${reason},
            ${sql.jsonb(content as never)}, ${sql.array(changed, 'text')}, ${userId})`);
}

const summaryColumns = sql.fragment`v.id, v.number, v.reason, v.changed, v.created_by, v.created_at`;

/** Newest first, in cursor pages keyed by number (the cursor is opaque: the number in base64url). */
export async function listVersions(
  db: CommonQueryMethods,
  kind: VersionedKind,
  itemId: string,
  query: z.output<typeof versionListQuery>,
) {
  const owner = sql.identifier(['v', kind === 'element' ? 'element_id' : 'page_id']);
  const below = query.cursor ? cursorNumber(query.cursor) : null;
  const conditions = [
    sql.fragment`${owner} = ${itemId}`,
    ...(below !== null ? [sql.fragment`v.number < ${below}`] : []),
    ...(query.reason ? [sql.fragment`v.reason = ${query.reason}`] : []),
  ];
  const where = sql.join(conditions, sql.fragment` and `);
  const rows = await db.any(sql.type(versionSummarySchema)`
    select ${summaryColumns} from content_versions v where ${where} order by v.number desc limit ${query.limit + 1}`);
  const items = rows.slice(0, query.limit);
  const last = items.at(-1);
  const total = query.include_total
    ? await db.oneFirst(sql.type(z.object({ count: z.number() }))`
        select count(*)::int as count from content_versions v
        where ${owner} = ${itemId} ${query.reason ? sql.fragment`and v.reason = ${query.reason}` : sql.fragment``}`)
    : undefined;
  return {
    items,
    next_cursor: rows.length > query.limit && last ? Buffer.from(String(last.number)).toString('base64url') : null,
    ...(total !== undefined ? { total } : {}),
  };
}

function cursorNumber(cursor: string): number {
  const number = Number(Buffer.from(cursor, 'base64url').toString('utf8'));
  if (!Number.isSafeInteger(number) || number < 1)
    throw new Problem(400, 'The cursor is not valid; use next_cursor from the previous page.');
  return number;
}

export async function getVersion(
  db: CommonQueryMethods,
  kind: VersionedKind,
  itemId: string,
  number: number,
): Promise<Version> {
  const owner = sql.identifier(['v', kind === 'element' ? 'element_id' : 'page_id']);
  const row = await db.maybeOne(sql.type(versionSchema)`
    select ${summaryColumns}, v.content from content_versions v where ${owner} = ${itemId} and v.number = ${number}`);
  if (!row) throw notFound(`No version ${number} of this ${kind}.`);
  return row;
}

export const comparisonSchema = z
  .object({
    from: versionSummarySchema,
    to: versionSummarySchema,
    changes: z.array(fieldChangeSchema).describe('Each field that differs; empty when none does'),
  })
  .meta({ id: 'ContentVersionComparison' });

export async function compareVersions(
  db: CommonQueryMethods,
  kind: VersionedKind,
  itemId: string,
  fromNumber: number,
  toNumber: number,
) {
  const [from, to] = [await getVersion(db, kind, itemId, fromNumber), await getVersion(db, kind, itemId, toNumber)];
  const summary = ({ content: _content, ...rest }: Version) => rest;
  return { from: summary(from), to: summary(to), changes: diffContent(kind, from.content, to.content) };
}

/**
 * Removes saves older than the retention; publishes and restores stay, and so
 * does an item's latest version (numbers are the latest plus one: were it
 * removed, its number would be given again).
 */
export const pruneSaveSql = (days: number) =>
  sql.fragment`delete from content_versions v where v.reason = 'save' and v.created_at < now() - ${days} * interval '1 day'
    and exists (select from content_versions later
                where (later.element_id = v.element_id or later.page_id = v.page_id) and later.number > v.number)`;
