// An element's draft and history as their own requests: publish (now, or at
// a time), discard, what the draft changes, and the versions kept (listed,
// read, compared, restored as a new draft). Readers of the site read drafts
// and versions; changes follow the element's own rule (authors: the elements
// they made). A scheduled publication runs here too, from the queue.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorUserId } from '../actor.ts';
import { Problem, conflict } from '../errors.ts';
import { requireOwnChange } from '../media/access.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { compareVersions, diffContent, getVersion, listVersions, type versionListQuery } from './content-versions.ts';
import { publishElementLocked, saveElementDraft, setElementPublishAt, writeElementInPlace } from './element-writes.ts';
import { elementColumns, elementSchema, findElement, type Element } from './elements.ts';
import { planPublication } from './publish-schedule.ts';
import { requireVersion, type IfMatch } from './types.ts';

export const draftChangeSchema = z
  .object({
    field: z.string().describe('`name` or `data.<field>` (pages: `title`, `template` or `seo.<key>`)'),
    live: z.unknown().describe('What public delivery shows now (absent: null)'),
    draft: z.unknown().describe('What the draft holds (absent: null)'),
  })
  .meta({ id: 'ContentDraftChange' });

export const draftDiffSchema = z
  .object({
    has_draft: z.boolean(),
    changes: z.array(draftChangeSchema).describe('Each field the draft changes; empty without a draft'),
  })
  .meta({ id: 'ContentDraftDiff' });

/** The element locked for a change by this caller at the version it names. */
async function lockedForChange(tx: CommonQueryMethods, access: SiteAccess, id: string, ifMatch?: IfMatch) {
  const element = await findElement(tx, access.site.id, id, true);
  requireOwnChange(access, element.created_by, 'the elements they made');
  requireVersion(element.version, ifMatch, 'element');
  return element;
}

const placeOf = ({ site }: SiteAccess) => ({ tenantId: site.tenant_id, siteId: site.id });

/**
 * Publishes the draft, or an element in status draft or archived, now; with
 * `at`, plans it for then (null cancels the plan). 409 when a published
 * element has no draft: there is nothing to publish.
 */
export async function publishElement(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  at: string | null | undefined,
  ifMatch?: IfMatch,
): Promise<Element> {
  return db.transaction(async (tx) => {
    const current = await lockedForChange(tx, access, id, ifMatch);
    if (at !== undefined) return setElementPublishAt(tx, current, at, true);
    if (current.status === 'published' && !current.draft)
      throw conflict('The element is published and has no draft: there is nothing to publish.');
    return publishElementLocked(tx, placeOf(access), current, {}, actorUserId(access.actor));
  });
}

/** Drops the draft (and a publication planned for it); the live element stays as it is. */
export async function discardElementDraft(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  ifMatch?: IfMatch,
): Promise<Element> {
  return db.transaction(async (tx) => {
    const current = await lockedForChange(tx, access, id, ifMatch);
    if (!current.draft) return current;
    const updated = await tx.one(sql.type(elementSchema)`
      update content_elements e set draft = null, draft_updated_at = null, draft_updated_by = null,
        publish_at = null, version = e.version + 1
      where e.id = ${id}
      returning ${elementColumns}`);
    if (current.publish_at) await planPublication(tx, 'element', id, null);
    return updated;
  });
}

/** What the draft changes, field by field. */
export async function elementDraftDiff(db: CommonQueryMethods, access: SiteAccess, id: string) {
  const element = await findElement(db, access.site.id, id);
  if (!element.draft) return { has_draft: false, changes: [] };
  const live = { name: element.name, data: element.data };
  const draft = { name: element.draft.name, data: element.draft.data };
  const changes = diffContent('element', live, draft).map((change) => ({
    field: change.field,
    live: change.from,
    draft: change.to,
  }));
  return { has_draft: true, changes };
}

export async function listElementVersions(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  query: z.output<typeof versionListQuery>,
) {
  await findElement(db, access.site.id, id);
  return listVersions(db, 'element', id, query);
}

export async function getElementVersion(db: CommonQueryMethods, access: SiteAccess, id: string, number: number) {
  await findElement(db, access.site.id, id);
  return getVersion(db, 'element', id, number);
}

export async function compareElementVersions(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  from: number,
  to: number,
) {
  await findElement(db, access.site.id, id);
  return compareVersions(db, 'element', id, from, to);
}

const elementContent = z.object({ name: z.string(), data: z.record(z.string(), z.unknown()) });

/**
 * Writes a version's name and data as a new draft of a published element, or
 * into the columns of an unpublished one, checked against the type as it is
 * now (422 lists what no longer fits); kept as a version of reason restore.
 */
export async function restoreElementVersion(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  number: number,
  ifMatch?: IfMatch,
): Promise<Element> {
  return db.transaction(async (tx) => {
    const current = await lockedForChange(tx, access, id, ifMatch);
    const version = await getVersion(tx, 'element', id, number);
    const content = elementContent.parse(version.content);
    const edits = { name: content.name, data: content.data, replace: true };
    const userId = actorUserId(access.actor);
    if (current.status === 'published') return saveElementDraft(tx, placeOf(access), current, edits, userId, 'restore');
    return writeElementInPlace(tx, placeOf(access), current, current.status, edits, userId, 'restore');
  });
}

/**
 * The queue's part of a scheduled publication: publishes the element if it
 * still has a time and the time has come. A draft that no longer passes the
 * publish rules is not published: the plan is dropped and the reason given
 * back, for the log (the editor sees publish_at cleared).
 */
export async function publishDueElement(
  db: CommonQueryMethods,
  id: string,
): Promise<{ published: boolean; problem?: string }> {
  return db.transaction(async (tx) => {
    const row = await tx.maybeOne(sql.type(elementSchema.extend({ tenant_id: z.uuid() }))`
      select ${elementColumns}, e.tenant_id from content_elements e
      where e.id = ${id} and e.publish_at <= now() for update of e`);
    if (!row) return { published: false };
    const { tenant_id: tenantId, ...element } = row;
    const clear = () =>
      tx.query(
        sql.typeAlias('void')`update content_elements set publish_at = null, version = version + 1 where id = ${id}`,
      );
    if (element.status === 'published' && !element.draft) {
      await clear();
      return { published: false };
    }
    try {
      await publishElementLocked(tx, { tenantId, siteId: element.site_id }, element, {}, null, { scheduled: true });
      return { published: true };
    } catch (error) {
      if (!(error instanceof Problem)) throw error;
      await clear();
      return { published: false, problem: error.message };
    }
  });
}
