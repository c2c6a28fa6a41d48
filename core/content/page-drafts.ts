// A page's draft and history as their own requests, as an element's
// (core/content/element-drafts.ts): publish (now, or at a time), discard,
// what the draft changes, and the versions kept (listed, read, compared,
// restored as a new draft). Only title, seo and template are drafted and
// versioned; slug, place in the tree and layout are live.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorUserId } from '../actor.ts';
import { Problem, conflict } from '../errors.ts';
import { requireOwnChange } from '../media/access.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { compareVersions, diffContent, getVersion, listVersions, type versionListQuery } from './content-versions.ts';
import { publishPageLocked, savePageDraft, setPagePublishAt, writePageInPlace } from './page-writes.ts';
import { findPage, pageColumns, pageSchema, seoSchema, type Page } from './pages.ts';
import { planPublication } from './publish-schedule.ts';
import { requireVersion, type IfMatch } from './types.ts';

async function lockedForChange(tx: CommonQueryMethods, access: SiteAccess, id: string, ifMatch?: IfMatch) {
  const page = await findPage(tx, access.site.id, id, true);
  requireOwnChange(access, page.created_by, 'the pages they made');
  requireVersion(page.version, ifMatch, 'page');
  return page;
}

const placeOf = ({ site }: SiteAccess) => ({ tenantId: site.tenant_id, siteId: site.id });

/** Publishes the draft, or an unpublished page, now; with `at`, plans it (null cancels). 409: nothing to publish. */
export async function publishPage(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  at: string | null | undefined,
  ifMatch?: IfMatch,
): Promise<Page> {
  return db.transaction(async (tx) => {
    const current = await lockedForChange(tx, access, id, ifMatch);
    if (at !== undefined) return setPagePublishAt(tx, current, at, true);
    if (current.status === 'published' && !current.draft)
      throw conflict('The page is published and has no draft: there is nothing to publish.');
    return publishPageLocked(tx, placeOf(access), current, {}, actorUserId(access.actor));
  });
}

export async function discardPageDraft(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  ifMatch?: IfMatch,
): Promise<Page> {
  return db.transaction(async (tx) => {
    const current = await lockedForChange(tx, access, id, ifMatch);
    if (!current.draft) return current;
    const updated = await tx.one(sql.type(pageSchema)`
      update pages p set draft = null, draft_updated_at = null, draft_updated_by = null, publish_at = null,
        version = p.version + 1
      where p.id = ${id}
      returning ${pageColumns}`);
    if (current.publish_at) await planPublication(tx, 'page', id, null);
    return updated;
  });
}

export async function pageDraftDiff(db: CommonQueryMethods, access: SiteAccess, id: string) {
  const page = await findPage(db, access.site.id, id);
  if (!page.draft) return { has_draft: false, changes: [] };
  const live = { title: page.title, seo: page.seo, template: page.template };
  const draft = { title: page.draft.title, seo: page.draft.seo, template: page.draft.template };
  const changes = diffContent('page', live, draft).map((change) => ({
    field: change.field,
    live: change.from,
    draft: change.to,
  }));
  return { has_draft: true, changes };
}

export async function listPageVersions(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  query: z.output<typeof versionListQuery>,
) {
  await findPage(db, access.site.id, id);
  return listVersions(db, 'page', id, query);
}

export async function getPageVersion(db: CommonQueryMethods, access: SiteAccess, id: string, number: number) {
  await findPage(db, access.site.id, id);
  return getVersion(db, 'page', id, number);
}

export async function comparePageVersions(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  from: number,
  to: number,
) {
  await findPage(db, access.site.id, id);
  return compareVersions(db, 'page', id, from, to);
}

const pageContent = z.object({ title: z.string(), seo: seoSchema, template: z.string().nullable() });

/** Writes a version's title, seo and template as a new draft (published page) or into the columns; reason restore. */
export async function restorePageVersion(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  number: number,
  ifMatch?: IfMatch,
): Promise<Page> {
  return db.transaction(async (tx) => {
    const current = await lockedForChange(tx, access, id, ifMatch);
    const version = await getVersion(tx, 'page', id, number);
    const edits = pageContent.parse(version.content);
    const userId = actorUserId(access.actor);
    if (current.status === 'published') return savePageDraft(tx, placeOf(access), current, edits, userId, 'restore');
    return writePageInPlace(tx, placeOf(access), current, current.status, edits, userId, 'restore');
  });
}

/** The queue's part of a scheduled publication (see publishDueElement). */
export async function publishDuePage(
  db: CommonQueryMethods,
  id: string,
): Promise<{ published: boolean; problem?: string }> {
  return db.transaction(async (tx) => {
    const row = await tx.maybeOne(sql.type(pageSchema.extend({ tenant_id: z.uuid() }))`
      select ${pageColumns}, p.tenant_id from pages p where p.id = ${id} and p.publish_at <= now() for update of p`);
    if (!row) return { published: false };
    const { tenant_id: tenantId, ...page } = row;
    const clear = () =>
      tx.query(sql.typeAlias('void')`update pages set publish_at = null, version = version + 1 where id = ${id}`);
    if (page.status === 'published' && !page.draft) {
      await clear();
      return { published: false };
    }
    try {
      await publishPageLocked(tx, { tenantId, siteId: page.site_id }, page, {}, null, { scheduled: true });
      return { published: true };
    } catch (error) {
      if (!(error instanceof Problem)) throw error;
      await clear();
      return { published: false, problem: error.message };
    }
  });
}
