// What an SEO review reads: the text sent, or a post of the site, with the
// fields sent taking the place of the post's own.
import type { CommonQueryMethods } from '../../db/pool.ts';
import { findPost } from '../posts/posts.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import type { SeoInput } from './analyze.ts';

export type SeoRequest = {
  post_id?: string | undefined;
  title?: string | undefined;
  description?: string | undefined;
  slug?: string | undefined;
  body?: string | undefined;
  body_format?: 'html' | 'markdown' | undefined;
  keyword?: string | undefined;
  locale?: string | undefined;
};

export async function seoInputOf(db: CommonQueryMethods, { site }: SiteAccess, request: SeoRequest): Promise<SeoInput> {
  // Another site's post is a 404, as everywhere.
  const post = request.post_id ? await findPost(db, site.id, request.post_id) : undefined;
  return {
    title: request.title ?? post?.seo.title ?? post?.title ?? '',
    description: request.description ?? post?.seo.description ?? post?.excerpt ?? '',
    slug: request.slug ?? post?.slug ?? null,
    body: request.body ?? post?.body ?? '',
    bodyFormat: request.body_format ?? post?.body_format ?? 'html',
    keyword: request.keyword ?? null,
    locale: request.locale ?? post?.locale ?? site.default_locale,
  };
}
