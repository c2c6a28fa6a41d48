// Content types: a named, versioned schema of fields per site. Everyone who
// reaches the site reads them; editors and administrators (and content:write
// service accounts) shape them. A schema is checked whole before it is saved
// (every problem at once); a change that existing elements would no longer
// satisfy is refused with the elements named (core/content/type-changes.ts).
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem, conflict, notFound } from '../errors.ts';
import { containing } from '../like-pattern.ts';
import { after, countOf, pageQuery, toPage } from '../pagination.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { timestamp } from '../timestamp.ts';
import { actorUserId } from '../actor.ts';
import { checkData, defaultProblem, type DataIssue } from './data.ts';
import {
  apiIdPattern,
  fieldSchema,
  maxFields,
  referenceTypePaths,
  schemaProblems,
  type Field,
  type SchemaIssue,
} from './fields.ts';
import { targetProblems } from './links.ts';

export const apiId = z.string().regex(apiIdPattern, 'snake_case: a lower-case letter, then letters, digits or _');
export const typeName = z.string().trim().min(1).max(200);
export const typeDescription = z.string().max(2000);
export const fieldsSchema = z.array(fieldSchema).max(maxFields);

export const contentTypeSchema = z
  .object({
    id: z.uuid(),
    site_id: z.uuid(),
    name: z.string(),
    api_id: z.string(),
    description: z.string(),
    fields: z.array(fieldSchema),
    version: z.number().int().describe('Raised by every change of the fields; elements record the one they satisfy'),
    created_by: z.uuid().nullable(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'ContentType' });

export type ContentType = Omit<z.infer<typeof contentTypeSchema>, 'fields'> & { fields: Field[] };

/** Rows are read without re-validating the fields: they were checked on the way in. */
const typeRow = contentTypeSchema.extend({ fields: z.array(z.any()) });
export const typeColumns = sql.fragment`ct.id, ct.site_id, ct.name, ct.api_id, ct.description, ct.fields, ct.version,
  ct.created_by, ct.created_at, ct.updated_at`;

export const typeListQuery = pageQuery.extend({
  q: z.string().max(200).optional().describe('Part of the name or api_id'),
});

export async function findType(db: CommonQueryMethods, siteId: string, id: string, lock = false): Promise<ContentType> {
  const row = await db.maybeOne(sql.type(typeRow)`
    select ${typeColumns} from content_types ct where ct.id = ${id} ${lock ? sql.fragment`for update` : sql.fragment``}`);
  if (!row || row.site_id !== siteId) throw notFound('No such content type.');
  return row;
}

export async function listTypes(db: CommonQueryMethods, { site }: SiteAccess, query: z.infer<typeof typeListQuery>) {
  const text = query.q
    ? sql.fragment`and (ct.name ilike ${containing(query.q)} or ct.api_id ilike ${containing(query.q)})`
    : sql.fragment``;
  const matching = sql.fragment`select ${typeColumns} from content_types ct where ct.site_id = ${site.id} ${text}`;
  const rows = await db.any(
    sql.type(typeRow)`${matching} and ${after(query, 'ct')} order by ct.created_at, ct.id limit ${query.limit + 1}`,
  );
  return toPage(rows as readonly ContentType[], query, () => countOf(db, matching));
}

export const getType = (db: CommonQueryMethods, { site }: SiteAccess, id: string) => findType(db, site.id, id);

/** Every problem of a schema at once: its shape, its rules, the types its references name. */
export async function fieldProblems(
  db: CommonQueryMethods,
  siteId: string,
  fields: Field[],
  selfApiId?: string,
): Promise<SchemaIssue[]> {
  const issues = schemaProblems(fields, defaultProblem);
  const named = referenceTypePaths(fields);
  if (named.length) {
    const known = new Set<string>(
      await db.anyFirst(sql.type(z.object({ api_id: z.string() }))`
        select api_id from content_types where site_id = ${siteId}
        and api_id = any(${sql.array([...new Set(named.flatMap((entry) => entry.apiIds))], 'text')})`),
    );
    // A type may refer to its own kind (a page section holding sections).
    if (selfApiId) known.add(selfApiId);
    for (const { path, apiIds } of named)
      for (const unknown of apiIds.filter((name) => !known.has(name)))
        issues.push({ path, message: `no content type ${unknown} in the site` });
  }
  return issues;
}

const invalidSchema = (issues: SchemaIssue[]) =>
  new Problem(422, `The schema has ${issues.length} problem(s).`, {
    errors: issues.map((issue) => ({ path: `body.${issue.path}`, message: issue.message })),
  });

/** 422 with every problem, or nothing. */
export async function requireValidFields(
  db: CommonQueryMethods,
  siteId: string,
  fields: Field[],
  selfApiId?: string,
): Promise<void> {
  const issues = await fieldProblems(db, siteId, fields, selfApiId);
  if (issues.length) throw invalidSchema(issues);
}

export type ValidationReport = { valid: boolean; errors: DataIssue[]; fields?: Field[] };

/** What zod found wrong, as issues under `path`. */
const issuesUnder = (error: z.ZodError | undefined, path: string): DataIssue[] =>
  error?.issues.map((issue) => ({ path: [path, ...issue.path].join('.'), message: issue.message })) ?? [];

/** What `schema` finds wrong with `value`, as issues under `path`. */
const problemsOf = (schema: z.ZodType, value: unknown, path: string) =>
  issuesUnder(schema.safeParse(value).error, path);

/** A content type as create takes it, every part still to be judged (ValidationReport). */
export type TypeDraft = {
  name?: unknown;
  api_id?: unknown;
  description?: unknown;
  fields: unknown;
  sample?: Record<string, unknown> | undefined;
  mode: 'draft' | 'publish';
};

/**
 * Checks a content type without saving, with every problem at once: the
 * name, description and api_id given (a malformed or taken api_id among the
 * rest), the fields' shape (as zod sees it) and rules, and, when given,
 * sample data against them, as a draft or for publishing.
 */
export async function validateSchema(
  db: CommonQueryMethods,
  { site }: SiteAccess,
  input: TypeDraft,
): Promise<ValidationReport> {
  const given = (key: 'name' | 'api_id' | 'description') => input[key] !== undefined;
  const errors: DataIssue[] = [
    ...(given('name') ? problemsOf(typeName, input.name, 'name') : []),
    ...(given('description') ? problemsOf(typeDescription, input.description, 'description') : []),
    ...(given('api_id') ? problemsOf(apiId, input.api_id, 'api_id') : []),
  ];
  const selfApiId = given('api_id') && apiId.safeParse(input.api_id).success ? (input.api_id as string) : undefined;
  if (selfApiId && (await apiIdInUse(db, site.id, selfApiId)))
    errors.push({ path: 'api_id', message: 'the site already has a content type with this api_id' });
  const parsed = fieldsSchema.safeParse(input.fields);
  if (!parsed.success) return { valid: false, errors: [...errors, ...issuesUnder(parsed.error, 'fields')] };
  const fields = parsed.data;
  const fieldIssues = await fieldProblems(db, site.id, fields, selfApiId);
  errors.push(...fieldIssues);
  // Sample data is judged against fields that hold together, whatever else is wrong.
  if (input.sample && fieldIssues.length === 0) {
    const checked = checkData(fields, input.sample, input.mode, { applyDefaults: true });
    errors.push(...checked.issues.map((issue) => ({ ...issue, path: issue.path.replace(/^data/, 'sample') })));
    if (checked.issues.length === 0)
      errors.push(
        ...(await targetProblems(db, site.id, checked)).map((issue) => ({
          ...issue,
          path: issue.path.replace(/^data/, 'sample'),
        })),
      );
  }
  return { valid: errors.length === 0, errors, fields };
}

const apiIdInUse = (db: CommonQueryMethods, siteId: string, name: string) =>
  db.exists(sql.type(z.object({}))`select 1 from content_types where site_id = ${siteId} and api_id = ${name}`);

const apiIdTaken = (error: unknown): never => {
  if (error instanceof UniqueIntegrityConstraintViolationError)
    throw conflict('The site already has a content type with that api_id.');
  throw error;
};

export type TypeInput = { name: string; api_id: string; description?: string | undefined; fields: Field[] };

/** Inserts a type whose fields were checked; 409 when the api_id is taken. */
export function insertType(
  db: CommonQueryMethods,
  site: { id: string; tenant_id: string },
  input: TypeInput,
  createdBy: string | null,
): Promise<ContentType> {
  return db
    .one(
      sql.type(typeRow)`
      insert into content_types as ct (tenant_id, site_id, name, api_id, description, fields, created_by)
      values (${site.tenant_id}, ${site.id}, ${input.name}, ${input.api_id}, ${input.description ?? ''},
              ${sql.jsonb(input.fields as never)}, ${createdBy})
      returning ${typeColumns}`,
    )
    .catch(apiIdTaken);
}

export async function createType(db: CommonQueryMethods, access: SiteAccess, input: TypeInput): Promise<ContentType> {
  await requireValidFields(db, access.site.id, input.fields, input.api_id);
  return insertType(db, access.site, input, actorUserId(access.actor));
}

/**
 * The versions an If-Match names (its strong entity tags; `*` or no header is
 * undefined). Weak tags never match a change (RFC 9110 §13.1.1 asks for the
 * strong comparison), so a header of weak tags only is an empty list.
 */
export type IfMatch = readonly number[];

/** 412 when the caller's copy (If-Match) is not the current version. */
export function requireVersion(current: number, ifMatch: IfMatch | undefined, what: string): void {
  if (ifMatch === undefined || ifMatch.includes(current)) return;
  throw new Problem(
    412,
    ifMatch.length === 0
      ? `If-Match names only weak ETags, which never match a change; send the ${what}'s ETag as given, e.g. "${current}".`
      : `The ${what} changed since version ${ifMatch.join(' or ')}; it is at version ${current}.`,
  );
}

/** Whether a fields column names the type (by api_id) in any reference_types, at any depth. */
export const namesType = (fields: ReturnType<typeof sql.identifier>, typeApiId: string) =>
  sql.fragment`jsonb_path_exists(${fields}, '$.**.reference_types[*] ? (@ == $id)', ${sql.jsonb({ id: typeApiId })})`;

/** Counts of what keeps a type from being deleted: its elements, and types whose references name it. */
export async function deleteType(db: CommonQueryMethods, { site }: SiteAccess, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const type = await findType(tx, site.id, id, true);
    const blockers = await tx.one(sql.type(z.object({ elements: z.number(), referring_types: z.array(z.string()) }))`
      select (select count(*)::int from content_elements where type_id = ${id}) as elements,
             array(select api_id from content_types other where other.site_id = ${site.id} and other.id <> ${id}
                   and ${namesType(sql.identifier(['other', 'fields']), type.api_id)}
                   order by api_id) as referring_types`);
    if (blockers.elements > 0 || blockers.referring_types.length > 0)
      throw new Problem(
        409,
        `The content type is in use: ${blockers.elements} element(s)` +
          (blockers.referring_types.length ? `, referred to by ${blockers.referring_types.join(', ')}` : '') +
          '. Delete or change those first.',
        { type: '/problems/content-type-in-use', title: 'Content type in use', extensions: { in_use: blockers } },
      );
    await tx.query(sql.typeAlias('void')`delete from content_types where id = ${id}`);
  });
}
