// Builds a generated website from its copy, inside the job's settling
// transaction (worker/jobs/website.ts), so the types, pages, elements,
// translations and posts commit together with the debit and the job's
// status, or none of them do. Everything goes through the domain's own
// writers, so every check a person's request meets holds here too.
// - Content types hero, text_block and service are made when first needed;
//   a type of that api_id already in the site is reused when it has the
//   fields written here (same ids and types) and requires no other, else
//   the job fails (content_type_conflict) rather than write elements that
//   do not fit.
// - Pages: home at the root, the others its children in the order asked,
//   each with its elements in the `main` area. The home's slug is the first
//   of home, home-2... free in every locale made, so an earlier website (or
//   a page of that name) is left alone and the new tree's paths are free.
// - Navigation is the page tree (positions in the order asked): the public
//   navigation shows it once the pages are published; all is made as drafts,
//   for a person to review.
// - Extra locales get copies (translation mode copy: the master's text,
//   recorded as copied, for a person to translate) of each page and element.
// - Posts are drafts with slugs made free in the site.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { createElement } from '../content/element-writes.ts';
import { addSlot } from '../content/page-elements.ts';
import { createPage, type Page } from '../content/pages.ts';
import { createType, findType, type ContentType } from '../content/types.ts';
import type { Field } from '../content/fields.ts';
import { Problem } from '../errors.ts';
import { createPost } from '../posts/post-writes.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { slugify } from '../tenancy/tenants.ts';
import { runTranslation } from '../translations/translate.ts';
import type { WebsiteCopy, WebsiteJob } from './brief.ts';

const field = (id: string, label: string, type: 'text' | 'long_text', required = false): Field => ({
  id,
  label,
  type,
  required,
  localized: true,
  unique: false,
});

const typeDefinitions = {
  hero: {
    name: 'Hero',
    description: 'The opening banner of a page',
    fields: [
      field('headline', 'Headline', 'text', true),
      field('subheadline', 'Subheadline', 'long_text'),
      field('call_to_action', 'Call to action', 'text'),
    ],
  },
  text_block: {
    name: 'Text block',
    description: 'A heading and its text',
    fields: [field('heading', 'Heading', 'text'), field('body', 'Body', 'long_text', true)],
  },
  service: {
    name: 'Service',
    description: 'One service offered',
    fields: [field('name', 'Name', 'text', true), field('description', 'Description', 'long_text')],
  },
} as const;
type TypeKey = keyof typeof typeDefinitions;

/** The problem type of a site type the website cannot use (the job names it content_type_conflict). */
export const contentTypeConflict = '/problems/content-type-conflict';

export type WebsiteOutput = {
  content_types: { api_id: string; id: string; created: boolean }[];
  pages: { key: string; id: string; slug: string; path: string; title: string; element_ids: string[] }[];
  navigation: { title: string; path: string; children: { title: string; path: string }[] }[];
  translations: { kind: 'pages' | 'elements'; master_id: string; translation_id: string; locale: string }[];
  post_ids: string[];
};

/** Why an existing type cannot hold what is written here, or null when it can. */
function incompatibility(existing: ContentType, wanted: readonly Field[]): string | null {
  for (const want of wanted) {
    const have = existing.fields.find((candidate) => candidate.id === want.id);
    if (!have) return `it has no field ${want.id}`;
    if (have.type !== want.type) return `its field ${want.id} is ${have.type}, not ${want.type}`;
  }
  const extra = existing.fields.find((have) => have.required && !wanted.some((want) => want.id === have.id));
  return extra ? `it requires ${extra.id}, which is not written` : null;
}

/** The site's type of that api_id when it fits, else a new one; made once per build. */
function typeMaker(tx: CommonQueryMethods, access: SiteAccess, made: WebsiteOutput['content_types']) {
  const found = new Map<TypeKey, ContentType>();
  return async (key: TypeKey): Promise<ContentType> => {
    const known = found.get(key);
    if (known) return known;
    const definition = typeDefinitions[key];
    const existing = await tx.maybeOne(sql.type(z.object({ id: z.uuid() }))`
      select id from content_types where site_id = ${access.site.id} and api_id = ${key}`);
    let type: ContentType;
    if (existing) {
      type = await findType(tx, access.site.id, existing.id);
      const why = incompatibility(type, definition.fields);
      if (why)
        throw new Problem(
          409,
          `The site has a content type ${key} that the website cannot use: ${why}. Rename its api_id, or give it those fields.`,
          { type: contentTypeConflict, title: 'Content type conflict' },
        );
    } else {
      type = await createType(tx, access, { api_id: key, ...definition, fields: [...definition.fields] });
    }
    made.push({ api_id: key, id: type.id, created: !existing });
    found.set(key, type);
    return type;
  };
}

/** The first of base, base-2, base-3... that no row of `taken` has. */
const freeSlug = (taken: readonly string[], base: string) => {
  const used = new Set(taken);
  let slug = base;
  for (let n = 2; used.has(slug); n++) slug = `${base}-${n}`;
  return slug;
};

/** The elements of a page, in the order they are placed. */
function elementsOf(page: WebsiteCopy['pages'][number]) {
  return [
    ...(page.hero ? [{ type: 'hero' as const, name: 'hero', data: page.hero }] : []),
    ...page.sections.map((section, index) => ({
      type: 'text_block' as const,
      name: `section ${index + 1}`,
      data: { heading: section.heading, body: section.body },
    })),
    ...(page.services ?? []).map((service) => ({ type: 'service' as const, name: service.name, data: service })),
  ];
}

export async function buildWebsite(
  tx: CommonQueryMethods,
  access: SiteAccess,
  brief: WebsiteJob,
  copy: WebsiteCopy,
): Promise<WebsiteOutput> {
  const { site } = access;
  const output: WebsiteOutput = { content_types: [], pages: [], navigation: [], translations: [], post_ids: [] };
  const typeFor = typeMaker(tx, access, output.content_types);
  const locales = [site.default_locale, ...brief.extra_locales];
  const rootSlugs = await tx.anyFirst(sql.type(z.object({ slug: z.string() }))`
    select slug from pages where site_id = ${site.id} and parent_id is null and locale = any(${sql.array(locales, 'text')})`);
  let home: Page | undefined;
  const made: { page: Page; elementIds: string[] }[] = [];
  for (const pageCopy of copy.pages) {
    const isHome = home === undefined;
    const page: Page = await createPage(tx, access, {
      parent_id: home?.id ?? null,
      slug: isHome ? freeSlug(rootSlugs, slugify(pageCopy.key, 'home', 200)) : slugify(pageCopy.key, 'page', 200),
      title: pageCopy.title,
      status: 'draft',
      seo: { title: pageCopy.title.slice(0, 300), description: pageCopy.sections[0]!.body.slice(0, 155) },
    });
    home ??= page;
    const elementIds: string[] = [];
    for (const element of elementsOf(pageCopy)) {
      const type = await typeFor(element.type);
      const created = await createElement(tx, access, {
        type: type.id,
        name: `${pageCopy.title}: ${element.name}`.slice(0, 200),
        data: element.data,
        status: 'draft',
      });
      await addSlot(tx, access, page.id, { element_id: created.id, area: 'main' });
      elementIds.push(created.id);
    }
    made.push({ page, elementIds });
    output.pages.push({
      key: pageCopy.key,
      id: page.id,
      slug: page.slug,
      path: page.path,
      title: page.title,
      element_ids: elementIds,
    });
  }
  const [top, ...children] = made.map(({ page }) => ({ title: page.title, path: page.path }));
  output.navigation = [{ ...top!, children }];
  // Pages in tree order, so each translation finds its parent's in that locale.
  for (const locale of brief.extra_locales)
    for (const { page, elementIds } of made)
      for (const [kind, id] of [
        ['pages', page.id] as const,
        ...elementIds.map((element) => ['elements', element] as const),
      ]) {
        const translated = await runTranslation(
          tx,
          access,
          { kind, id, target_locale: locale, mode: 'copy', overwrite: false },
          () => Promise.reject(new Error('a copy translates nothing')),
        );
        output.translations.push({ kind, master_id: id, translation_id: translated.translation_id, locale });
      }
  const postSlugs: string[] = [
    ...(await tx.anyFirst(sql.type(z.object({ slug: z.string() }))`
    select slug from posts where site_id = ${site.id} and locale = ${site.default_locale}`)),
  ];
  for (const post of copy.posts) {
    const slug = freeSlug(postSlugs, slugify(post.title, 'post', 190));
    postSlugs.push(slug);
    const created = await createPost(tx, access, {
      title: post.title,
      slug,
      excerpt: post.excerpt,
      body: post.body,
      body_format: 'markdown',
      status: 'draft',
    });
    output.post_ids.push(created.id);
  }
  return output;
}
