// Creating and changing elements. The data is checked against the type on
// every write (drafts by the draft rules, publishing by all of them), with
// the ids it names and its unique values asked of the database, and every
// problem answered at once. Authors change only the elements they made;
// `If-Match` with the element's version turns a lost update into a 412.
// A published element's edits wait in its draft (migration 0058) until they
// are published; every publish and save keeps a version (content-versions.ts).
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
import { diffContent, recordVersion, type VersionReason } from './content-versions.ts';
import { futureTime, nothingToPublish, planPublication } from './publish-schedule.ts';
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
  /** A time to publish at (the draft, or a draft-status element); null cancels it. */
  publish_at?: string | null | undefined;
};

/** What a write makes of the content: `name` and `data` given replace theirs (data field by field, unless `replace`). */
export type ContentEdits = { name?: string | undefined; data?: Record<string, unknown> | undefined; replace?: boolean };

/** Where the element is, for the version kept. */
export type ElementPlace = { tenantId: string; siteId: string };

export const invalid = (issues: DataIssue[]) =>
  new Problem(422, `The element is not valid: ${issues.length} problem(s).`, {
    errors: issues.map((issue) => ({ path: `body.${issue.path}`, message: issue.message })),
  });

/** Checks data for a write (its links are the caller's to store); throws 422 with every problem. */
export async function checkedData(
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
    const content = { name: input.name, data: checked.value, schema_version: type.version };
    const place = { kind: 'element' as const, id: created.id, tenantId: site.tenant_id, siteId: site.id };
    await recordVersion(tx, place, input.status === 'published' ? 'publish' : 'save', content, userId);
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

/**
 * PATCH. A published element keeps serving what it has: a new name or data
 * goes into its draft (checked by the draft rules), until it is published.
 * `status: published` publishes, the draft included; any other status takes
 * the element out of publication with its draft folded into its own columns
 * (an unpublished element has no draft beside it and is edited in place).
 */
export async function updateElement(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  changes: ElementChanges,
  ifMatch?: IfMatch,
): Promise<Element> {
  const { site, actor } = access;
  const place = { tenantId: site.tenant_id, siteId: site.id };
  const userId = actorUserId(actor);
  return db.transaction(async (tx) => {
    const current = await findElement(tx, site.id, id, true);
    requireOwnChange(access, current.created_by, 'the elements they made');
    requireVersion(current.version, ifMatch, 'element');
    if (changes.status === 'published' && changes.publish_at)
      throw new Problem(422, 'publish_at plans a later publication; this change publishes now.', {
        errors: [{ path: 'body.publish_at', message: 'is not for a change to status published' }],
      });
    const edits = { name: changes.name, data: changes.data };
    const edited = changes.name !== undefined || changes.data !== undefined;
    let updated = current;
    if (changes.status === 'published') updated = await publishElementLocked(tx, place, current, edits, userId);
    else if (current.status === 'published' && changes.status === undefined) {
      if (edited) updated = await saveElementDraft(tx, place, current, edits, userId, 'save');
    } else
      updated = await writeElementInPlace(tx, place, current, changes.status ?? current.status, edits, userId, 'save');
    if (changes.publish_at !== undefined)
      updated = await setElementPublishAt(tx, updated, changes.publish_at, updated === current);
    return updated;
  });
}

/** The element's content as its next write starts from: the draft when it has one, else its own columns. */
const startingContent = (element: Element) =>
  element.draft ? { name: element.draft.name, data: element.draft.data } : { name: element.name, data: element.data };

function edited(element: Element, edits: ContentEdits) {
  const start = startingContent(element);
  const data = edits.data ? (edits.replace ? edits.data : { ...start.data, ...edits.data }) : start.data;
  return { name: edits.name ?? start.name, data };
}

const placedFor = (element: Element) => ({
  id: element.id,
  locale: element.locale,
  translation: element.master_id !== null,
});

/** Publishes the draft (or the element's own columns) with `edits` on top, by every rule; keeps a version. */
export async function publishElementLocked(
  tx: CommonQueryMethods,
  place: ElementPlace,
  current: Element,
  edits: ContentEdits,
  userId: string | null,
  options: { scheduled?: boolean } = {},
): Promise<Element> {
  const { name, data } = edited(current, edits);
  const type = await typeFromQuery(tx, place.siteId, current.type_id);
  const checked = await checkedData(tx, type, { ...placedFor(current), status: 'published' }, data, false);
  const updated = await tx.one(sql.type(elementSchema)`
    update content_elements e set
      name = ${name}, data = ${sql.jsonb(checked.value as never)}, status = 'published',
      published_at = coalesce(e.published_at, now()), schema_version = ${type.version}, version = e.version + 1,
      updated_by = ${userId}, draft = null, draft_updated_at = null, draft_updated_by = null, publish_at = null
    where e.id = ${current.id}
    returning ${elementColumns}`);
  await saveLinks(tx, current.id, place.siteId, checked);
  if (current.publish_at && !options.scheduled) await planPublication(tx, 'element', current.id, null);
  const content = { name, data: checked.value, schema_version: type.version };
  await recordVersion(tx, { kind: 'element', id: current.id, ...place }, 'publish', content, userId);
  return updated;
}

/**
 * Saves a published element's changes beside it. Checked by the draft rules,
 * the ids it names asked of the database and its unique values against the
 * other elements' live ones; its links are not stored (they are the live
 * version's: what uses what, and what public delivery resolves) until it is
 * published, when everything is checked again. A draft equal to the live
 * content is no draft.
 */
export async function saveElementDraft(
  tx: CommonQueryMethods,
  place: ElementPlace,
  current: Element,
  edits: ContentEdits,
  userId: string | null,
  reason: VersionReason,
): Promise<Element> {
  const { name, data } = edited(current, edits);
  const type = await typeFromQuery(tx, place.siteId, current.type_id);
  const checked = checkData(type.fields, data, 'draft', { localizedOnly: current.master_id !== null });
  const issues = [
    ...checked.issues,
    ...(await targetProblems(tx, place.siteId, checked)),
    ...(await uniqueProblems(tx, type.id, current.locale, checked, current.id)),
  ];
  if (issues.length) throw invalid(issues);
  const content = { name, data: checked.value, schema_version: type.version };
  const live = { name: current.name, data: current.data };
  const same = diffContent('element', live, { name, data: checked.value }).length === 0;
  const updated = await tx.one(sql.type(elementSchema)`
    update content_elements e set
      draft = ${same ? null : sql.jsonb(content as never)}, draft_updated_at = ${same ? null : sql.fragment`now()`},
      draft_updated_by = ${same ? null : userId}, version = e.version + 1
    where e.id = ${current.id}
    returning ${elementColumns}`);
  await recordVersion(tx, { kind: 'element', id: current.id, ...place }, reason, content, userId);
  return updated;
}

/** A write of the element's own columns (it is not published, or leaves publication): a draft folds in. */
export async function writeElementInPlace(
  tx: CommonQueryMethods,
  place: ElementPlace,
  current: Element,
  status: 'draft' | 'published' | 'archived',
  edits: ContentEdits,
  userId: string | null,
  reason: VersionReason,
): Promise<Element> {
  if (status === 'published') return publishElementLocked(tx, place, current, edits, userId);
  const { name, data } = edited(current, edits);
  const type = await typeFromQuery(tx, place.siteId, current.type_id);
  const checked = await checkedData(tx, type, { ...placedFor(current), status }, data, false);
  const updated = await tx.one(sql.type(elementSchema)`
    update content_elements e set
      name = ${name}, data = ${sql.jsonb(checked.value as never)}, status = ${status},
      published_at = ${publishedAtAfter(status, 'e')}, schema_version = ${type.version}, version = e.version + 1,
      updated_by = ${userId}, draft = null, draft_updated_at = null, draft_updated_by = null
    where e.id = ${current.id}
    returning ${elementColumns}`);
  await saveLinks(tx, current.id, place.siteId, checked);
  if (edits.name !== undefined || edits.data !== undefined || current.draft) {
    const content = { name, data: checked.value, schema_version: type.version };
    await recordVersion(tx, { kind: 'element', id: current.id, ...place }, reason, content, userId);
  }
  return updated;
}

/** Plans the element's publication at `at` (null: cancels it); `bump` raises the version when nothing else did. */
export async function setElementPublishAt(
  tx: CommonQueryMethods,
  element: Element,
  at: string | null,
  bump: boolean,
): Promise<Element> {
  if (at === null && element.publish_at === null) return element;
  if (at !== null) {
    futureTime(at, 'body.publish_at');
    if (element.status === 'published' && !element.has_draft) throw nothingToPublish('body.publish_at');
  }
  const updated = await tx.one(sql.type(elementSchema)`
    update content_elements e set publish_at = ${at}, version = e.version + ${bump ? 1 : 0}
    where e.id = ${element.id}
    returning ${elementColumns}`);
  await planPublication(tx, 'element', element.id, at);
  return updated;
}
