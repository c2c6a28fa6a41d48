// Creating, changing and deleting posts. HTML bodies are sanitised on the way
// in (the allowlist rich text uses); Markdown is stored as written. A slug is
// unique in the site and locale (409), made from the title when not given. A
// scheduled post has a time in the future and a job that publishes it then
// (./schedule.ts), in the same transaction. A translation takes its
// master's tags, categories and featured image unless given its own.
// Authors create posts and change only their own; `If-Match` with the post's
// version turns a lost update into a 412. A change of a post's text queues the
// refresh of the knowledge documents taken from it (core/knowledge/follow-posts.ts).
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorUserId } from '../actor.ts';
import { Problem, conflict } from '../errors.ts';
import { requireOwnChange } from '../media/access.ts';
import { sanitizeRichText } from '../content/data.ts';
import { requireSiteLocale } from '../content/locales.ts';
import { publishedAtAfter } from '../content/status.ts';
import { requireSeoImage } from '../content/pages.ts';
import { requireVersion, type IfMatch } from '../content/types.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { slugify } from '../tenancy/tenants.ts';
import { followPostChange } from '../knowledge/follow-posts.ts';
import { findPost, postColumns, postSchema, type Post, type PostStatus } from './posts.ts';
import { schedulePublication } from './schedule.ts';

export type PostFields = {
  title?: string | undefined;
  slug?: string | undefined;
  excerpt?: string | undefined;
  body?: string | undefined;
  body_format?: 'markdown' | 'html' | undefined;
  status?: PostStatus | undefined;
  scheduled_for?: string | null | undefined;
  author_id?: string | null | undefined;
  tags?: string[] | undefined;
  categories?: string[] | undefined;
  featured_media_id?: string | null | undefined;
  seo?: { title?: string; description?: string; image_id?: string; noindex?: boolean } | undefined;
};

export type PostInput = PostFields & { title: string; locale?: string | undefined; master_id?: string | undefined };

const invalid = (path: string, message: string, detail: string) =>
  new Problem(422, detail, { errors: [{ path: `body.${path}`, message }] });

const taken = (error: unknown): never => {
  if (error instanceof UniqueIntegrityConstraintViolationError) {
    if (error.constraint === 'posts_site_id_locale_slug_key')
      throw conflict('The site already has a post with that slug in that locale.');
    throw conflict('The post already has a translation in that locale.');
  }
  throw error;
};

/** The body as stored: HTML through the allowlist, Markdown as written. */
export const storedBody = (body: string, format: 'markdown' | 'html') =>
  format === 'html' ? sanitizeRichText(body) : body;

/** Tags and categories: trimmed, empty ones dropped, each once, in the order given. */
const labels = (values: string[]) => [...new Set(values.map((value) => value.trim()).filter(Boolean))];

/** A scheduled post publishes itself later; any other status has no time to keep. */
function scheduleOf(status: PostStatus, scheduledFor: string | null | undefined): string | null {
  if (status !== 'scheduled') {
    if (scheduledFor)
      throw invalid('scheduled_for', 'is only for status scheduled', 'Only a scheduled post has a time.');
    return null;
  }
  if (!scheduledFor) throw invalid('scheduled_for', 'is required for status scheduled', 'Say when to publish it.');
  if (Date.parse(scheduledFor) <= Date.now())
    throw invalid('scheduled_for', 'is not in the future', 'A scheduled post publishes in the future.');
  return scheduledFor;
}

/** What the post names besides itself: its featured image, its seo image, its author. 422 at the field otherwise. */
async function requireNamed(db: CommonQueryMethods, access: SiteAccess, fields: PostFields): Promise<void> {
  const { site } = access;
  if (fields.featured_media_id) {
    const image = await db.exists(sql.type(z.object({}))`
      select 1 from media_items where id = ${fields.featured_media_id} and site_id = ${site.id} and kind = 'image'`);
    if (!image) throw invalid('featured_media_id', 'is not an image of the site', 'No such image in the site.');
  }
  await requireSeoImage(db, site.id, fields.seo);
  if (fields.author_id) {
    const self = access.actor.kind === 'user' && access.actor.userId === fields.author_id;
    if (access.role === 'author' && !self) throw new Problem(403, 'Authors write only their own posts.');
    const member = await db.exists(sql.type(z.object({}))`
      select 1 from memberships where user_id = ${fields.author_id} and tenant_id = ${site.tenant_id}`);
    if (!member) throw invalid('author_id', 'is not a member of the site’s tenant', 'No such author.');
  }
}

/** A master post of the site, for a translation: 422 at body.master_id otherwise. */
async function findMaster(db: CommonQueryMethods, siteId: string, id: string): Promise<Post> {
  const master = await findPost(db, siteId, id).catch(() => undefined);
  if (!master || master.master_id !== null)
    throw invalid(
      'master_id',
      'is not a master post of the site',
      'master_id does not name a master post of the site.',
    );
  return master;
}

export async function createPost(db: CommonQueryMethods, access: SiteAccess, input: PostInput): Promise<Post> {
  const { site, actor } = access;
  return db.transaction(async (tx) => {
    const master = input.master_id ? await findMaster(tx, site.id, input.master_id) : undefined;
    const locale = input.locale ?? site.default_locale;
    requireSiteLocale(site, locale);
    if (master?.locale === locale)
      throw invalid('locale', 'is the master’s locale', 'A translation is in another locale than its master.');
    await requireNamed(tx, access, input);
    const status = input.status ?? 'draft';
    const scheduledFor = scheduleOf(status, input.scheduled_for);
    const format = input.body_format ?? 'markdown';
    const userId = actorUserId(actor);
    const created = await tx
      .one(
        sql.type(postSchema)`
        insert into posts as p (tenant_id, site_id, title, slug, excerpt, body, body_format, locale, master_id, status,
                                published_at, scheduled_for, author_id, tags, categories, featured_media_id, seo,
                                created_by, updated_by)
        values (${site.tenant_id}, ${site.id}, ${input.title}, ${input.slug ?? slugify(input.title, 'post', 200)},
                ${input.excerpt ?? ''}, ${storedBody(input.body ?? '', format)}, ${format}, ${locale},
                ${master?.id ?? null}, ${status}, ${status === 'published' ? sql.fragment`now()` : null},
                ${scheduledFor}, ${input.author_id === undefined ? userId : input.author_id},
                ${sql.array(labels(input.tags ?? master?.tags ?? []), 'text')},
                ${sql.array(labels(input.categories ?? master?.categories ?? []), 'text')},
                ${input.featured_media_id === undefined ? (master?.featured_media_id ?? null) : input.featured_media_id},
                ${sql.jsonb((input.seo ?? {}) as never)}, ${userId}, ${userId})
        returning ${postColumns}`,
      )
      .catch(taken);
    if (scheduledFor) await schedulePublication(tx, created.id, scheduledFor);
    return created;
  });
}

/** Authors change the posts they wrote or made. */
export function requireOwnPost(access: SiteAccess, post: Post): void {
  const wrote = access.actor.kind === 'user' && post.author_id === access.actor.userId;
  if (!wrote) requireOwnChange(access, post.created_by, 'their own posts');
}

export async function updatePost(
  db: CommonQueryMethods,
  access: SiteAccess,
  id: string,
  changes: PostFields,
  ifMatch?: IfMatch,
): Promise<Post> {
  return db.transaction(async (tx) => {
    const current = await findPost(tx, access.site.id, id, true);
    requireOwnPost(access, current);
    requireVersion(current.version, ifMatch, 'post');
    await requireNamed(tx, access, changes);
    const status = changes.status ?? current.status;
    const requested =
      changes.scheduled_for !== undefined
        ? changes.scheduled_for
        : status === 'scheduled'
          ? current.scheduled_for
          : null;
    // A time kept as it was stands even if it has just passed (its job is about to run); a new one must be ahead.
    const unchanged = current.status === 'scheduled' && status === 'scheduled' && requested === current.scheduled_for;
    const scheduledFor = unchanged ? requested : scheduleOf(status, requested);
    const format = changes.body_format ?? current.body_format;
    const body = changes.body ?? (format !== current.body_format ? current.body : undefined);
    const updated = await tx
      .one(
        sql.type(postSchema)`
        update posts p set
          title = coalesce(${changes.title ?? null}, p.title),
          slug = coalesce(${changes.slug ?? null}, p.slug),
          excerpt = coalesce(${changes.excerpt ?? null}, p.excerpt),
          body = coalesce(${body === undefined ? null : storedBody(body, format)}, p.body),
          body_format = ${format},
          status = ${status},
          published_at = ${publishedAtAfter(status, 'p')},
          scheduled_for = ${scheduledFor},
          author_id = ${changes.author_id === undefined ? sql.fragment`p.author_id` : changes.author_id},
          tags = ${changes.tags ? sql.array(labels(changes.tags), 'text') : sql.fragment`p.tags`},
          categories = ${changes.categories ? sql.array(labels(changes.categories), 'text') : sql.fragment`p.categories`},
          featured_media_id = ${changes.featured_media_id === undefined ? sql.fragment`p.featured_media_id` : changes.featured_media_id},
          seo = ${changes.seo ? sql.jsonb(changes.seo as never) : sql.fragment`p.seo`},
          version = p.version + 1,
          updated_by = ${actorUserId(access.actor)}
        where p.id = ${id}
        returning ${postColumns}`,
      )
      .catch(taken);
    if (scheduledFor !== current.scheduled_for) await schedulePublication(tx, id, scheduledFor);
    await followPostChange(tx, id, current, updated);
    return updated;
  });
}

/** Deletes the post and its translations. */
export async function deletePost(db: CommonQueryMethods, access: SiteAccess, id: string): Promise<void> {
  await db.transaction(async (tx) => {
    const current = await findPost(tx, access.site.id, id, true);
    requireOwnPost(access, current);
    if (current.scheduled_for) await schedulePublication(tx, id, null);
    await tx.query(sql.typeAlias('void')`delete from posts where id = ${id}`);
  });
}
