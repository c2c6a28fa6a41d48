// GET /{site}/translations/{kind}/{id}: the master (whichever member the id
// names) and each translation with the state of every localized field, and
// the site's locales that have no translation yet.
import { z } from 'zod';
import type { CommonQueryMethods } from '../../db/pool.ts';
import { siteLocales } from '../content/locales.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { timestamp } from '../timestamp.ts';
import { translationKinds, type AnyAdapter, type Group, type Member } from './model.ts';
import { fieldStateSchema, fieldStatesOf, staleFields } from './staleness.ts';

const memberSchema = z.object({
  id: z.uuid(),
  locale: z.string(),
  status: z.string().nullable().describe('The item’s status; null for media translations, which have none'),
  updated_at: timestamp,
});

export const translationSchema = memberSchema
  .extend({
    stale: z.boolean().describe('Some localized field needs a translator'),
    stale_fields: z.array(z.string()),
    fields: z.record(z.string(), fieldStateSchema).describe('Each localized field’s state'),
  })
  .meta({ id: 'TranslationState' });

export const translationsOverviewSchema = z
  .object({
    kind: z.enum(translationKinds),
    master: memberSchema,
    localized_fields: z.array(z.string()).describe('What translations translate'),
    synced_fields: z
      .array(z.string())
      .describe('Non-localized fields each translation holds a copy of (sync copies them)'),
    inherited_fields: z
      .array(z.string())
      .describe('Non-localized fields translations read from the master as they are served (nothing to copy)'),
    translations: z.array(translationSchema),
    missing_locales: z.array(z.string()).describe('Site locales with no translation yet'),
  })
  .meta({ id: 'TranslationsOverview' });

export type TranslationsOverview = z.infer<typeof translationsOverviewSchema>;

const memberView = (member: Member<unknown>) => ({
  id: member.id,
  locale: member.locale,
  status: member.status,
  updated_at: member.updated_at,
});

export function overviewOf(adapter: AnyAdapter, access: SiteAccess, group: Group<unknown>): TranslationsOverview {
  const fields = adapter.localizedFields(group).map((field) => field.name);
  const { master, translations } = group;
  const present = new Set([master.locale, ...translations.map((translation) => translation.locale)]);
  return {
    kind: adapter.kind,
    master: memberView(master),
    localized_fields: fields,
    synced_fields: Object.keys(adapter.syncedValues(master.item)),
    inherited_fields: adapter.inheritedFields(group),
    translations: translations.map((translation) => {
      const stale = staleFields(master, translation, fields);
      return {
        ...memberView(translation),
        stale: stale.length > 0,
        stale_fields: stale,
        fields: fieldStatesOf(master, translation, fields),
      };
    }),
    missing_locales: siteLocales(access.site).filter((locale) => !present.has(locale)),
  };
}

export async function readTranslations(
  db: CommonQueryMethods,
  access: SiteAccess,
  adapter: AnyAdapter,
  id: string,
): Promise<TranslationsOverview> {
  return overviewOf(adapter, access, await adapter.group(db, access.site, id));
}
