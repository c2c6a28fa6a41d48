// Posts as translations see them: title, slug, excerpt, body and the seo
// text are localized (the body in its master's format, Markdown or HTML);
// tags, categories, the featured image and the seo image and noindex are the
// post's whatever the language: a translation starts with its master's
// (core/posts/post-writes.ts) and a sync refreshes them. Author and
// publication times stay each translation's own.
import { createPost, requireOwnPost, updatePost } from '../posts/post-writes.ts';
import { postColumns, postSchema, type Post } from '../posts/posts.ts';
import { tableGroup } from './group.ts';
import { textOf as text, type TranslationAdapter } from './model.ts';
import { seoWith, syncedSeo, withoutSeo } from './seo.ts';

export const postsAdapter: TranslationAdapter<Post> = {
  kind: 'posts',
  noun: 'post',
  group: (db, site, id) =>
    tableGroup(
      db,
      { kind: 'posts', table: 'posts', noun: 'post', schema: postSchema, columns: postColumns, alias: 'p' },
      site.id,
      id,
    ),
  localizedFields: ({ master }) => [
    { name: 'title', format: 'plain', required: true },
    { name: 'slug', format: 'slug', required: true },
    { name: 'excerpt', format: 'plain' },
    { name: 'body', format: master.item.body_format },
    { name: 'seo.title', format: 'plain' },
    { name: 'seo.description', format: 'plain' },
  ],
  syncedValues: (post) => ({
    tags: post.tags,
    categories: post.categories,
    featured_media_id: post.featured_media_id,
    ...syncedSeo(post.seo),
  }),
  inheritedFields: () => [],
  requireChange: (access, member) => requireOwnPost(access, member.item),
  async write(db, access, { master, translations }, locale, values) {
    const existing = translations.find((translation) => translation.locale === locale);
    const { title, slug, excerpt, body } = withoutSeo(values);
    const fields = {
      title: text(title),
      slug: text(slug),
      excerpt: text(excerpt),
      body: text(body),
      // The body is translated in its master's format.
      ...(body === undefined ? {} : { body_format: master.item.body_format }),
    };
    if (existing)
      return (await updatePost(db, access, existing.id, { ...fields, seo: seoWith(existing.item.seo, values) })).id;
    const created = await createPost(db, access, {
      ...fields,
      master_id: master.id,
      locale,
      title: fields.title ?? master.item.title,
      slug: fields.slug ?? master.item.slug,
      body_format: master.item.body_format,
      status: 'draft',
      seo: seoWith(seoWith({}, syncedSeo(master.item.seo)), values),
    });
    return created.id;
  },
  async applySync(db, access, translation, values) {
    await updatePost(db, access, translation.id, {
      tags: values.tags as string[],
      categories: values.categories as string[],
      featured_media_id: values.featured_media_id as string | null,
      seo: seoWith(translation.item.seo, values),
    });
  },
};
