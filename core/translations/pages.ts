// Pages as translations see them: title, slug and the seo text are
// localized; the template and the seo image and noindex are the page's
// whatever the language, and each translation holds a copy a sync refreshes.
// A new translation goes under the translation of its master's parent in the
// same locale when there is one (so its path reads in its language), else
// beside its master.
import { z } from 'zod';
import { sql } from '../../db/pool.ts';
import { createPage, pageColumns, pageSchema, type Page } from '../content/pages.ts';
import { updatePage } from '../content/page-writes.ts';
import { requireOwnChange } from '../media/access.ts';
import { tableGroup } from './group.ts';
import { textOf as text, type TranslationAdapter } from './model.ts';
import { seoWith, syncedSeo, withoutSeo } from './seo.ts';

export const pagesAdapter: TranslationAdapter<Page> = {
  kind: 'pages',
  noun: 'page',
  group: (db, site, id) =>
    tableGroup(
      db,
      { kind: 'pages', table: 'pages', noun: 'page', schema: pageSchema, columns: pageColumns, alias: 'p' },
      site.id,
      id,
    ),
  localizedFields: () => [
    { name: 'title', format: 'plain', required: true },
    { name: 'slug', format: 'slug', required: true },
    { name: 'seo.title', format: 'plain' },
    { name: 'seo.description', format: 'plain' },
  ],
  syncedValues: (page) => ({ template: page.template, ...syncedSeo(page.seo) }),
  inheritedFields: () => [],
  requireChange: (access, member) => requireOwnChange(access, member.item.created_by, 'the pages they made'),
  async write(db, access, { master, translations }, locale, values) {
    const existing = translations.find((translation) => translation.locale === locale);
    const { title, slug } = withoutSeo(values);
    if (existing)
      return (
        await updatePage(db, access, existing.id, {
          title: text(title),
          slug: text(slug),
          seo: seoWith(existing.item.seo, values),
        })
      ).id;
    const parentId = master.item.parent_id
      ? ((await db.maybeOneFirst(sql.type(z.object({ id: z.uuid() }))`
          select id from pages where master_id = ${master.item.parent_id} and locale = ${locale}`)) ??
        master.item.parent_id)
      : null;
    const created = await createPage(db, access, {
      parent_id: parentId,
      master_id: master.id,
      locale,
      title: text(title) ?? master.item.title,
      slug: text(slug) ?? master.item.slug,
      status: 'draft',
      seo: seoWith(seoWith({}, syncedSeo(master.item.seo)), values),
      template: master.item.template,
    });
    return created.id;
  },
  async applySync(db, access, translation, values) {
    await updatePage(db, access, translation.id, {
      template: values.template as string | null,
      seo: seoWith(translation.item.seo, values),
    });
  },
};
