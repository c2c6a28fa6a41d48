// Creating and changing elements. The data is checked against the type on
// every write (drafts by the draft rules, publishing by all of them), with
// the ids it names and its unique values asked of the database, and every
// problem answered at once. Authors change only the elements they made;
// `If-Match` with the element's version turns a lost update into a 412.
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorUserId } from '../actor.ts';
import { Problem, conflict } from '../errors.ts';
import { requireOwnChange } from '../media/access.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { checkData, type DataIssue } from './data.ts';
import { elementColumns, elementSchema, findElement, typeFromQuery, type Element } from './elements.ts';
import { saveLinks, targetProblems, uniqueProblems } from './links.ts';
import { requireSiteLocale } from './locales.ts';
import { publishedAtAfter } from './status.ts';
import { requireVersion, type ContentType, type IfMatch } from './types.ts';

export type ElementInput = {
  /** The content type by id or api_id. */
  type?: string | undefined;
  /** The content type by id, as element reads name it: either field will do, and both must name the same type. */
  type_id?: string | undefined;
  name: string;
  locale?: string | undefined;
  master_id?: string | undefined;
  data: Record<string, unknown>;
  status: 'draft' | 'published';
};

export type ElementChanges = {
  name?: string | undefined;
  data?: Record<string, unknown> | undefined;
  status?: 'draft' | 'published' | 'archived' | undefined;
};

const invalid = (issues: DataIssue[]) =>
  new Problem(422, `The element is not valid: ${issues.length} problem(s).`, {
    errors: issues.map((issue) => ({ path: `body.${issue.path}`, message: issue.message })),
  });

/** Checks data for a write and stores its links; throws 422 with every problem. */
async function checkedData(
  db: CommonQueryMethods,
  type: ContentType,
  element: { id: string | null; locale: string; translation: boolean; status: string },
  data: Record<string, unknown>,
  applyDefaults: boolean,
) {
  const checked = checkData(type.fields, data, element.status === 'published' ? 'publish' : 'draft', {
    localizedOnly: element.translation,
    applyDefaults,
  });
  if (checked.uniques.length)
    await db.query(sql.typeAlias('void')`select from pg_advisory_xact_lock(hashtext('content-unique:' || ${type.id}))`);
  const issues = [
    ...checked.issues,
    ...(await targetProblems(db, type.site_id, checked)),
    ...(await uniqueProblems(db, type.id, element.locale, checked, element.id)),
  ];
  if (issues.length) throw invalid(issues);
  return checked;
}

const translationTaken = (error: unknown): never => {
  if (error instanceof UniqueIntegrityConstraintViolationError)
    throw conflict('The element already has a translation in that locale.');
  throw error;
};

export async function createElement(db: CommonQueryMethods, access: SiteAccess, input: ElementInput): Promise<Element> {
  const { site, actor } = access;
  return db.transaction(async (tx) => {
    const master = input.master_id ? await findMaster(tx, site.id, input.master_id) : undefined;
    const named = input.type ?? input.type_id;
    if (!master && !named)
      throw new Problem(422, 'Name the content type.', {
        errors: [{ path: 'body.type', message: 'is required (unless master_id names the element translated)' }],
      });
    const type = await typeFromQuery(tx, site.id, master?.type_id ?? named!).catch((error: unknown) => {
      throw error instanceof Problem ? bodyTypeProblem(input.type ? 'type' : 'type_id') : error;
    });
    const typeDiffers = Boolean(input.type) && input.type !== type.id && input.type !== type.api_id;
    const typeIdDiffers = Boolean(input.type_id) && input.type_id !== type.id;
    if (master && (typeDiffers || typeIdDiffers))
      throw new Problem(422, 'A translation is of its master’s type.', {
        errors: [{ path: typeDiffers ? 'body.type' : 'body.type_id', message: 'differs from the master’s type' }],
      });
    if (typeIdDiffers)
      throw new Problem(422, '`type` and `type_id` name different content types; send one of them.', {
        errors: [{ path: 'body.type_id', message: 'names another content type than type' }],
      });
    const locale = input.locale ?? site.default_locale;
    requireSiteLocale(site, locale);
    if (master && master.locale === locale)
      throw new Problem(422, 'A translation is in another locale than its master.', {
        errors: [{ path: 'body.locale', message: 'is the master’s locale' }],
      });
    const element = { id: null, locale, translation: Boolean(master), status: input.status };
    const checked = await checkedData(tx, type, element, input.data, true);
    const userId = actorUserId(actor);
    const created = await tx
      .one(
        sql.type(elementSchema)`
        insert into content_elements as e (tenant_id, site_id, type_id, schema_version, name, locale, master_id, data,
                                           status, published_at, created_by, updated_by)
        values (${site.tenant_id}, ${site.id}, ${type.id}, ${type.version}, ${input.name}, ${locale}, ${master?.id ?? null},
                ${sql.jsonb(checked.value as never)}, ${input.status},
                ${input.status === 'published' ? sql.fragment`now()` : null}, ${userId}, ${userId})
        returning ${elementColumns}`,
      )
      .catch(translationTaken);
    await saveLinks(tx, created.id, site.id, checked);
    return created;
  });
}

const bodyTypeProblem = (field: 'type' | 'type_id') =>
  new Problem(422, 'No such content type in the site.', {
    errors: [{ path: `body.${field}`, message: 'is not a content type of the site' }],
  });

/** The element a translation translates: a master of the site (422 at body.master_id otherwise). */
async function findMaster(db: CommonQueryMethods, siteId: string, id: string): Promise<Element> {
  const master = await findElement(db, siteId, id).catch(() => undefined);
  if (!master || master.master_id !== null)
    throw new Problem(422, 'master_id does not name a master element of the site.', {
      errors: [{ path: 'body.master_id', message: 'is not a master element of the site' }],
    });
  return master;
}

export async function updateElement(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  changes: ElementChanges,
  ifMatch?: IfMatch,
): Promise<Element> {
  const { site, actor } = access;
  return db.transaction(async (tx) => {
    const current = await findElement(tx, site.id, id, true);
    requireOwnChange(access, current.created_by, 'the elements they made');
    requireVersion(current.version, ifMatch, 'element');
    const status = changes.status ?? current.status;
    const data = changes.data ? { ...current.data, ...changes.data } : current.data;
    const type = await typeFromQuery(tx, site.id, current.type_id);
    const element = { id, locale: current.locale, translation: current.master_id !== null, status };
    const checked = await checkedData(tx, type, element, data, false);
    const updated = await tx.one(sql.type(elementSchema)`
      update content_elements e set
        name = ${changes.name ?? current.name}, data = ${sql.jsonb(checked.value as never)}, status = ${status},
        published_at = ${publishedAtAfter(status, 'e')}, schema_version = ${type.version}, version = e.version + 1,
        updated_by = ${actorUserId(actor)}
      where e.id = ${id}
      returning ${elementColumns}`);
    await saveLinks(tx, id, site.id, checked);
    return updated;
  });
}
