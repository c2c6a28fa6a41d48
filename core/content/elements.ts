// Content elements: the entries of a content type, read by everyone who
// reaches the site (content:read). Listing filters by type, status, locale,
// name and by field values (`filter[field]=value`, or `filter[field][op]`
// with eq, ne, gt, gte, lt, lte, in, contains, exists), sorted and in cursor
// pages. Field filters need the type, whose fields say how to compare: numbers
// as numbers, dates in time order, text as text.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem, notFound } from '../errors.ts';
import { containing } from '../like-pattern.ts';
import { pageQuery } from '../pagination.ts';
import { sortOptions, sortedPage, type SortKey } from '../sorting.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { instant, timestamp } from '../timestamp.ts';
import type { Field } from './fields.ts';
import { contentStatuses } from './status.ts';
import { findType, type ContentType } from './types.ts';

export const elementDraftSchema = z
  .object({
    name: z.string(),
    data: z.record(z.string(), z.unknown()),
    schema_version: z.number().int(),
    updated_at: timestamp,
    updated_by: z.uuid().nullable(),
  })
  .meta({ id: 'ContentElementDraft' });

export const elementSchema = z
  .object({
    id: z.uuid(),
    site_id: z.uuid(),
    type_id: z.uuid(),
    schema_version: z.number().int().describe('The type’s version the data was last validated against'),
    name: z.string(),
    locale: z.string(),
    master_id: z.uuid().nullable().describe('The element this one translates; null for a master'),
    data: z.record(z.string(), z.unknown()),
    status: z.enum(contentStatuses),
    published_at: timestamp.nullable(),
    version: z.number().int().describe('Raised by every change; the ETag, for If-Match'),
    created_by: z.uuid().nullable(),
    updated_by: z.uuid().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
    has_draft: z.boolean().describe('Whether a published element has changes not yet published (in `draft`)'),
    draft: elementDraftSchema
      .nullable()
      .describe(
        'A published element’s saved, unpublished changes; public delivery shows the live fields above until they are published',
      ),
    publish_at: timestamp.nullable().describe('When the draft (or a draft-status element) is to be published'),
  })
  .meta({ id: 'ContentElement' });

export type Element = z.infer<typeof elementSchema>;

/** Columns that are not the table's own, by the name they are read as: the draft as the API shows it. */
const computedColumns: Partial<Record<keyof Element, ReturnType<typeof sql.fragment>>> = {
  has_draft: sql.fragment`e.draft is not null`,
  draft: sql.fragment`case when e.draft is null then null
    else e.draft || jsonb_build_object('updated_at', api_time(e.draft_updated_at), 'updated_by', e.draft_updated_by) end`,
};

/** One column of an element read from `e` (page layouts read them one by one). */
export const elementColumn = (key: keyof Element) => computedColumns[key] ?? sql.identifier(['e', key]);

export const elementColumns = sql.fragment`e.id, e.site_id, e.type_id, e.schema_version, e.name, e.locale, e.master_id,
  e.data, e.status, e.published_at, e.version, e.created_by, e.updated_by, e.created_at, e.updated_at,
  ${computedColumns.has_draft!} as has_draft, ${computedColumns.draft!} as draft, e.publish_at`;

export async function findElement(db: CommonQueryMethods, siteId: string, id: string, lock = false): Promise<Element> {
  // By primary key; the site checked here (see findMedia).
  const row = await db.maybeOne(sql.type(elementSchema)`
    select ${elementColumns} from content_elements e where e.id = ${id} ${lock ? sql.fragment`for update` : sql.fragment``}`);
  if (!row || row.site_id !== siteId) throw notFound('No such element.');
  return row;
}

export const getElement = (db: CommonQueryMethods, { site }: SiteAccess, id: string) => findElement(db, site.id, id);

const sorts = {
  created_at: { column: 'created_at', cast: 'timestamptz' },
  updated_at: { column: 'updated_at', cast: 'timestamptz' },
  published_at: { column: 'published_at', cast: 'timestamptz' },
  name: { column: 'name', cast: 'text' },
} as const satisfies Record<string, SortKey>;

const sortNames = sortOptions(sorts);

export const elementListQuery = pageQuery
  .extend({
    type: z.string().max(100).optional().describe('A content type, by id or api_id'),
    status: z.enum(contentStatuses).optional(),
    locale: z.string().max(35).optional(),
    masters_only: z
      .enum(['true', 'false'])
      .transform((value) => value === 'true')
      .optional()
      .describe('Only masters, not translations'),
    q: z.string().max(200).optional().describe('Part of the name'),
    has_draft: z
      .enum(['true', 'false'])
      .transform((value) => value === 'true')
      .optional()
      .describe('Only published elements with unpublished changes (true), or only those without (false)'),
    sort: z.enum(sortNames).default('created_at').describe('A field, `-` first for descending'),
  })
  .catchall(z.union([z.string().max(1000), z.array(z.string().max(1000)).max(20)]))
  .describe(
    'Field filters: `filter[field]=value`, or `filter[field][op]=value` with op eq, ne, gt, gte, lt, lte, in, contains, exists',
  );

export type ElementListQuery = z.output<typeof elementListQuery>;

const operators = ['eq', 'ne', 'gt', 'gte', 'lt', 'lte', 'in', 'contains', 'exists'] as const;
type Operator = (typeof operators)[number];
const filterKey = /^filter\[([a-z][a-z0-9_]{0,62})\](?:\[([a-z]+)\])?$/;

/** A type by id or api_id in the site; 422 at query.type when there is none. */
export async function typeFromQuery(db: CommonQueryMethods, siteId: string, type: string): Promise<ContentType> {
  const found = await db.maybeOneFirst(sql.type(z.object({ id: z.uuid() }))`
    select id from content_types where site_id = ${siteId} and (api_id = ${type} or id::text = ${type.toLowerCase()})`);
  if (!found)
    throw new Problem(422, 'No such content type in the site.', {
      errors: [{ path: 'query.type', message: 'is not a content type of the site' }],
    });
  return findType(db, siteId, found);
}

/** The field filters of a query, as SQL over `e.data`; 422 naming each bad one. */
export function fieldFilters(query: Record<string, unknown>, fields: readonly Field[] | undefined, column = 'e') {
  const errors: { path: string; message: string }[] = [];
  const conditions: ReturnType<typeof sql.fragment>[] = [];
  for (const [key, raw] of Object.entries(query)) {
    if (!key.startsWith('filter')) continue;
    const match = filterKey.exec(key);
    if (!match) {
      errors.push({ path: `query.${key}`, message: 'is not a filter: use filter[field] or filter[field][op]' });
      continue;
    }
    const [, fieldId, op = 'eq'] = match as unknown as [string, string, Operator | undefined];
    const field = fields?.find((candidate) => candidate.id === fieldId);
    if (!fields) {
      errors.push({ path: `query.${key}`, message: 'field filters need ?type=' });
      continue;
    }
    if (!field) {
      errors.push({ path: `query.${key}`, message: `the type has no field ${fieldId}` });
      continue;
    }
    if (!operators.includes(op)) {
      errors.push({ path: `query.${key}`, message: `unknown operator; use one of ${operators.join(', ')}` });
      continue;
    }
    const text = Array.isArray(raw) ? raw.join(',') : String(raw);
    const condition = filterCondition(sql.identifier([column, 'data']), field, op, text);
    if (typeof condition === 'string') errors.push({ path: `query.${key}`, message: condition });
    else conditions.push(condition);
  }
  if (errors.length) throw new Problem(422, 'The request is not valid; see errors.', { errors });
  return conditions;
}

/** One filter, or why it cannot be: values are typed by the field, so jsonb compares numbers as numbers. */
function filterCondition(data: ReturnType<typeof sql.identifier>, field: Field, op: Operator, text: string) {
  const value = sql.fragment`${data} -> ${field.id}`;
  if (op === 'exists') {
    if (text !== 'true' && text !== 'false') return 'exists takes true or false';
    return text === 'true'
      ? sql.fragment`coalesce(${value}, 'null') <> 'null'::jsonb`
      : sql.fragment`coalesce(${value}, 'null') = 'null'::jsonb`;
  }
  if (op === 'contains') return sql.fragment`${data} ->> ${field.id} ilike ${containing(text)}`;
  const typed = (one: string): unknown => {
    if (field.type === 'integer' || field.type === 'number') {
      const number = Number(one);
      return one.trim() !== '' && Number.isFinite(number) ? number : undefined;
    }
    if (field.type === 'boolean') return one === 'true' ? true : one === 'false' ? false : undefined;
    return one;
  };
  const values = op === 'in' ? text.split(',') : [text];
  const parsed = values.map(typed);
  if (parsed.some((one) => one === undefined))
    return `is not ${field.type === 'boolean' ? 'true or false' : 'a number'}`;
  const json = (one: unknown) => sql.fragment`${JSON.stringify(one)}::jsonb`;
  if (op === 'in') return sql.fragment`${value} in (${sql.join(parsed.map(json), sql.fragment`, `)})`;
  if (field.type === 'datetime' && op !== 'eq' && op !== 'ne') {
    const given = instant.safeParse(text);
    if (!given.success) return 'is not a date-time with its offset in the years 0001 to 9999 (UTC)';
    return comparison(
      storedInstant(sql.fragment`${data} ->> ${field.id}`),
      op,
      sql.fragment`${given.data}::timestamptz`,
    );
  }
  return comparison(value, op, json(parsed[0]));
}

type Fragment = ReturnType<typeof sql.fragment>;

/**
 * A stored date-time (kept with the offset it was written with) as an
 * instant. PostgreSQL's timestamptz takes offsets up to ±15:59 only, RFC 3339
 * up to ±23:59 (a filter over such a value was a 500): the offset is taken off
 * the local time as an interval instead.
 */
const storedInstant = (text: Fragment) => sql.fragment`
  (case when ${text} ~ '[+-][0-9]{2}:[0-9]{2}$'
        then (left(${text}, -6)::timestamp - right(${text}, 6)::interval) at time zone 'UTC'
        else (${text})::timestamptz end)`;

const comparisons: Record<
  Exclude<Operator, 'in' | 'contains' | 'exists'>,
  (left: Fragment, right: Fragment) => Fragment
> = {
  eq: (left, right) => sql.fragment`${left} = ${right}`,
  ne: (left, right) => sql.fragment`${left} is distinct from ${right}`,
  gt: (left, right) => sql.fragment`${left} > ${right}`,
  gte: (left, right) => sql.fragment`${left} >= ${right}`,
  lt: (left, right) => sql.fragment`${left} < ${right}`,
  lte: (left, right) => sql.fragment`${left} <= ${right}`,
};

const comparison = (left: Fragment, op: Operator, right: Fragment) =>
  comparisons[op as keyof typeof comparisons](left, right);

export async function listElements(db: CommonQueryMethods, { site }: SiteAccess, query: ElementListQuery) {
  const type = query.type ? await typeFromQuery(db, site.id, query.type) : undefined;
  const conditions = [
    sql.fragment`e.site_id = ${site.id}`,
    ...(type ? [sql.fragment`e.type_id = ${type.id}`] : []),
    ...(query.status ? [sql.fragment`e.status = ${query.status}`] : []),
    ...(query.locale ? [sql.fragment`e.locale = ${query.locale}`] : []),
    ...(query.masters_only ? [sql.fragment`e.master_id is null`] : []),
    ...(query.q ? [sql.fragment`e.name ilike ${containing(query.q)}`] : []),
    ...(query.has_draft === undefined ? [] : [sql.fragment`(e.draft is not null) = ${query.has_draft}`]),
    ...fieldFilters(query, type?.fields),
  ];
  const matching = sql.fragment`select ${elementColumns} from content_elements e where ${sql.join(conditions, sql.fragment` and `)}`;
  return sortedPage(db, elementSchema, matching, 'e', sorts, query);
}
