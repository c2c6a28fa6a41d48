// The seo object of pages and posts is half localized: its title and
// description are text of the page's language, its image and noindex belong
// to the page whatever the language. Translations address its parts as
// `seo.title`, `seo.description`, `seo.image_id` and `seo.noindex`.
import type { z } from 'zod';
import type { seoSchema } from '../content/pages.ts';

type Seo = z.infer<typeof seoSchema>;

export const seoLocalized = ['seo.title', 'seo.description'] as const;
const seoSynced = ['seo.image_id', 'seo.noindex'] as const;

/** `seo` with the parts `values` names (by `seo.<part>`) set, an empty one removed. */
export function seoWith(seo: Seo, values: Record<string, unknown>): Seo {
  const next: Record<string, unknown> = { ...seo };
  for (const [name, value] of Object.entries(values)) {
    if (!name.startsWith('seo.')) continue;
    const part = name.slice(4);
    if (value === null || value === undefined || value === '') delete next[part];
    else next[part] = value;
  }
  return next;
}

/** The parts of `seo` that a sync copies, by name. */
export const syncedSeo = (seo: Seo): Record<string, unknown> =>
  Object.fromEntries(seoSynced.map((name) => [name, seo[name.slice(4) as keyof Seo] ?? null]));

/** Values of `values` that are not seo parts. */
export const withoutSeo = (values: Record<string, unknown>) =>
  Object.fromEntries(Object.entries(values).filter(([name]) => !name.startsWith('seo.')));
