// A site's locales and the fallback chain of each: the locale asked, then
// each shorter tag of it the site has (de-CH → de), then the site's default.
// Public reads serve, per item and per localized field, the first locale of
// the chain that has it, and say which one they served.
import { z } from 'zod';
import { Problem } from '../errors.ts';
import type { Site } from '../tenancy/sites.ts';

/** The locale a public read asks for (?locale=). */
export const wantedLocale = z
  .string()
  .max(35)
  .optional()
  .describe('The locale wanted; the site’s fallback chain applies');

export const siteLocales = (site: Site) => [...new Set([site.default_locale, ...site.locales])];

/** A locale the site has; 422 at body.locale otherwise. */
export function requireSiteLocale(site: Site, locale: string): void {
  if (!siteLocales(site).includes(locale))
    throw new Problem(422, 'The site does not have that locale.', {
      errors: [{ path: 'body.locale', message: `must be one of the site’s locales: ${siteLocales(site).join(', ')}` }],
    });
}

/**
 * The longest chain public reads serve (db/migrations/0020 spells the chain
 * out position by position): a tag whose every prefix is a locale of the site
 * is served by its first seven, then the default.
 */
export const maxChain = 8;

/** The chain for a locale asked (any tag, compared case-insensitively); the default alone when none is asked. */
export function fallbackChain(site: Site, asked: string | undefined): string[] {
  const locales = siteLocales(site);
  const byLower = new Map(locales.map((locale) => [locale.toLowerCase(), locale]));
  const chain: string[] = [];
  if (asked) {
    const parts = asked.toLowerCase().split('-');
    for (let length = parts.length; length > 0; length--) {
      const found = byLower.get(parts.slice(0, length).join('-'));
      if (found && !chain.includes(found) && chain.length < maxChain - 1) chain.push(found);
    }
  }
  if (!chain.includes(site.default_locale)) chain.push(site.default_locale);
  return chain;
}

export const localesSchema = z
  .object({
    default_locale: z.string(),
    locales: z.array(z.string()),
    fallbacks: z
      .record(z.string(), z.array(z.string()))
      .describe('For each locale, the locales served in its place, in order (itself first)'),
  })
  .meta({ id: 'SiteLocales' });

export const siteLocalesView = (site: Site): z.infer<typeof localesSchema> => ({
  default_locale: site.default_locale,
  locales: siteLocales(site),
  fallbacks: Object.fromEntries(siteLocales(site).map((locale) => [locale, fallbackChain(site, locale)])),
});
