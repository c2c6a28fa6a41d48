// Posts made by import jobs (from a URL, from a PDF), inside the job's
// settling transaction: a draft by the job's submitter, its HTML body
// sanitised as every HTML body is, its slug made from the title and made
// unique in the site and locale by a number (an import never fails on a
// taken slug), and where it came from in `source`, which a recrawl reads back.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { slugify } from '../tenancy/tenants.ts';
import { storedBody } from './post-writes.ts';
import { postColumns, postSchema, type Post, type PostSource } from './posts.ts';

export type ImportedPost = {
  title: string;
  excerpt: string;
  /** HTML, sanitised here. */
  body: string;
  locale: string;
  source: PostSource;
  featuredMediaId: string | null;
};

export type ImportOwner = { tenantId: string; siteId: string; userId: string | null };

const maxSlug = 200;
// Below the column's 1,000,000 characters, with room for what sanitising re-encodes; cut before sanitising, which closes what the cut left open.
const maxBody = 950_000;

/** The title's slug, or it with the first free number (-2, -3...) when taken in the site and locale. */
async function freeSlug(tx: CommonQueryMethods, siteId: string, locale: string, title: string): Promise<string> {
  const base = slugify(title, 'post', maxSlug - 6);
  const taken = new Set(
    await tx.anyFirst(sql.type(z.object({ slug: z.string() }))`
      select slug from posts
      where site_id = ${siteId} and locale = ${locale} and (slug = ${base} or slug ~ ${`^${base}-[0-9]+$`})`),
  );
  if (!taken.has(base)) return base;
  let n = 2;
  while (taken.has(`${base}-${n}`)) n++;
  return `${base}-${n}`;
}

/** Title and excerpt cut to what a post may hold. */
const clip = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1).trimEnd()}…` : text);

export async function insertImportedPost(
  tx: CommonQueryMethods,
  owner: ImportOwner,
  post: ImportedPost,
): Promise<Post> {
  const title = clip(post.title.trim() || 'Untitled', 300);
  const slug = await freeSlug(tx, owner.siteId, post.locale, title);
  return tx.one(sql.type(postSchema)`
    insert into posts as p (tenant_id, site_id, title, slug, excerpt, body, body_format, locale, status, author_id,
                            featured_media_id, source, created_by, updated_by)
    values (${owner.tenantId}, ${owner.siteId}, ${title}, ${slug}, ${clip(post.excerpt, 2000)},
            ${storedBody(post.body.slice(0, maxBody), 'html')}, 'html', ${post.locale}, 'draft', ${owner.userId},
            ${post.featuredMediaId}, ${sql.jsonb(post.source as never)}, ${owner.userId}, ${owner.userId})
    returning ${postColumns}`);
}

/** The post's `source` (null for a post written here), read alone; null when the post is not in the site. */
export async function postSource(
  db: CommonQueryMethods,
  siteId: string,
  id: string,
): Promise<{ source: PostSource | null } | null> {
  return db.maybeOne(sql.type(postSchema.pick({ source: true }))`
    select source from posts where id = ${id} and site_id = ${siteId}`);
}

/** The locale an import is written in: the one asked for, else the document's language when the site has it, else the site's default. */
export async function importLocale(
  db: CommonQueryMethods,
  siteId: string,
  asked: string | undefined,
  documentLang: string | null,
): Promise<string> {
  if (asked) return asked;
  const site = await db.one(sql.type(z.object({ default_locale: z.string(), locales: z.array(z.string()) }))`
    select default_locale, locales from sites where id = ${siteId}`);
  const lang = documentLang?.trim();
  if (lang) {
    const exact = site.locales.find((locale) => locale.toLowerCase() === lang.toLowerCase());
    const primary = site.locales.find((locale) => locale.toLowerCase() === lang.split('-')[0]!.toLowerCase());
    if (exact ?? primary) return (exact ?? primary)!;
  }
  return site.default_locale;
}
