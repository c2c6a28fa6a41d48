// Changing a page. A published page keeps serving its title, seo and
// template: new ones wait in its draft (migration 0058) until published.
// Its slug, its place in the tree and the elements placed on it are not
// drafted: a new slug rewrites the live paths at once (core/content/pages.ts),
// as moves and layouts do. `status: published` publishes, the draft
// included; any other status takes the page out of publication with its
// draft folded into its own columns (an unpublished page is edited in place).
// Every publish and save keeps a version (content-versions.ts).
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorUserId } from '../actor.ts';
import { Problem } from '../errors.ts';
import { requireOwnChange } from '../media/access.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { diffContent, recordVersion, type VersionReason } from './content-versions.ts';
import {
  findPage,
  lockTree,
  pageColumns,
  pageSchema,
  pathTaken,
  requireSeoImage,
  rewritePaths,
  type Page,
  type PageChanges,
} from './pages.ts';
import { futureTime, nothingToPublish, planPublication } from './publish-schedule.ts';
import { publishedAtAfter, type ContentStatus } from './status.ts';
import { requireVersion, type IfMatch } from './types.ts';

export type PageEdits = {
  title?: string | undefined;
  seo?: Page['seo'] | undefined;
  template?: string | null | undefined;
};
export type PagePlace = { tenantId: string; siteId: string };

type PageContent = { title: string; seo: Page['seo']; template: string | null };

const startingContent = (page: Page): PageContent =>
  page.draft
    ? { title: page.draft.title, seo: page.draft.seo, template: page.draft.template }
    : { title: page.title, seo: page.seo, template: page.template };

function edited(page: Page, edits: PageEdits): PageContent {
  const start = startingContent(page);
  return {
    title: edits.title ?? start.title,
    seo: edits.seo ?? start.seo,
    template: edits.template === undefined ? start.template : edits.template,
  };
}

const hasEdits = (edits: PageEdits) =>
  edits.title !== undefined || edits.seo !== undefined || edits.template !== undefined;

export async function updatePage(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  changes: PageChanges,
  ifMatch?: IfMatch,
): Promise<Page> {
  const { site, actor } = access;
  const place = { tenantId: site.tenant_id, siteId: site.id };
  const userId = actorUserId(actor);
  return db.transaction(async (tx) => {
    if (changes.slug !== undefined) await lockTree(tx, site.id);
    const current = await findPage(tx, site.id, id, true);
    requireOwnChange(access, current.created_by, 'the pages they made');
    requireVersion(current.version, ifMatch, 'page');
    await requireSeoImage(tx, site.id, changes.seo);
    if (changes.status === 'published' && changes.publish_at)
      throw new Problem(422, 'publish_at plans a later publication; this change publishes now.', {
        errors: [{ path: 'body.publish_at', message: 'is not for a change to status published' }],
      });
    const edits = { title: changes.title, seo: changes.seo, template: changes.template };
    let page = current;
    if (current.status === 'published' && changes.status === undefined) {
      if (changes.slug !== undefined && changes.slug !== current.slug)
        page = await writePageLive(tx, current, { ...live(current), slug: changes.slug }, 'published', userId, true);
      if (hasEdits(edits)) page = await savePageDraft(tx, place, page, edits, userId, 'save');
    } else
      page = await writePageInPlace(
        tx,
        place,
        current,
        changes.status ?? current.status,
        edits,
        userId,
        'save',
        changes.slug,
      );
    if (changes.publish_at !== undefined) page = await setPagePublishAt(tx, page, changes.publish_at, page === current);
    return page;
  });
}

const live = (page: Page): PageContent => ({ title: page.title, seo: page.seo, template: page.template });

/** The update of the page's own columns, a new slug rewriting the subtree's paths. */
async function writePageLive(
  tx: CommonQueryMethods,
  current: Page,
  content: PageContent & { slug: string },
  status: ContentStatus,
  userId: string | null,
  keepDraft: boolean,
): Promise<Page> {
  const path = `${current.path.slice(0, current.path.length - current.slug.length)}${content.slug}`;
  await rewritePaths(tx, current.id, current.path, path).catch(pathTaken);
  const keep = (column: string) => sql.identifier(['p', column]);
  return tx
    .one(
      sql.type(pageSchema)`
      update pages p set
        title = ${content.title}, slug = ${content.slug}, status = ${status}, published_at = ${publishedAtAfter(status, 'p')},
        seo = ${sql.jsonb(content.seo as never)}, template = ${content.template},
        version = p.version + 1, updated_by = ${userId},
        draft = ${keepDraft ? keep('draft') : null}, draft_updated_at = ${keepDraft ? keep('draft_updated_at') : null},
        draft_updated_by = ${keepDraft ? keep('draft_updated_by') : null},
        publish_at = ${status === 'published' && !keepDraft ? null : keep('publish_at')}
      where p.id = ${current.id}
      returning ${pageColumns}`,
    )
    .catch(pathTaken);
}

/** Publishes the draft (or the page's own columns) with `edits` on top; keeps a version. */
export async function publishPageLocked(
  tx: CommonQueryMethods,
  place: PagePlace,
  current: Page,
  edits: PageEdits,
  userId: string | null,
  options: { slug?: string | undefined; scheduled?: boolean } = {},
): Promise<Page> {
  const content = edited(current, edits);
  await requireSeoImage(tx, place.siteId, content.seo);
  const slug = options.slug ?? current.slug;
  const updated = await writePageLive(tx, current, { ...content, slug }, 'published', userId, false);
  if (current.publish_at && !options.scheduled) await planPublication(tx, 'page', current.id, null);
  await recordVersion(tx, { kind: 'page', id: current.id, ...place }, 'publish', content, userId);
  return updated;
}

/** A write of an unpublished page's columns, or of one leaving publication: a draft folds in. */
export async function writePageInPlace(
  tx: CommonQueryMethods,
  place: PagePlace,
  current: Page,
  status: ContentStatus,
  edits: PageEdits,
  userId: string | null,
  reason: VersionReason,
  slug?: string,
): Promise<Page> {
  if (status === 'published') return publishPageLocked(tx, place, current, edits, userId, { slug });
  const content = edited(current, edits);
  const updated = await writePageLive(tx, current, { ...content, slug: slug ?? current.slug }, status, userId, false);
  if (hasEdits(edits) || current.draft)
    await recordVersion(tx, { kind: 'page', id: current.id, ...place }, reason, content, userId);
  return updated;
}

/** Saves a published page's title, seo and template beside it; a draft equal to the live ones is no draft. */
export async function savePageDraft(
  tx: CommonQueryMethods,
  place: PagePlace,
  current: Page,
  edits: PageEdits,
  userId: string | null,
  reason: VersionReason,
): Promise<Page> {
  const content = edited(current, edits);
  await requireSeoImage(tx, place.siteId, content.seo);
  const same = diffContent('page', live(current), content).length === 0;
  const updated = await tx.one(sql.type(pageSchema)`
    update pages p set
      draft = ${same ? null : sql.jsonb(content as never)}, draft_updated_at = ${same ? null : sql.fragment`now()`},
      draft_updated_by = ${same ? null : userId}, version = p.version + 1
    where p.id = ${current.id}
    returning ${pageColumns}`);
  await recordVersion(tx, { kind: 'page', id: current.id, ...place }, reason, content, userId);
  return updated;
}

/** Plans the page's publication at `at` (null: cancels it); `bump` raises the version when nothing else did. */
export async function setPagePublishAt(
  tx: CommonQueryMethods,
  page: Page,
  at: string | null,
  bump: boolean,
): Promise<Page> {
  if (at === null && page.publish_at === null) return page;
  if (at !== null) {
    futureTime(at, 'body.publish_at');
    if (page.status === 'published' && !page.has_draft) throw nothingToPublish('body.publish_at');
  }
  const updated = await tx.one(sql.type(pageSchema)`
    update pages p set publish_at = ${at}, version = p.version + ${bump ? 1 : 0}
    where p.id = ${page.id}
    returning ${pageColumns}`);
  await planPublication(tx, 'page', page.id, at);
  return updated;
}
