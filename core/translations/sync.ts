// POST /{site}/translations/{kind}/{id}/sync-translations: every translation
// gets its master's non-localized values (those it holds a copy of), in one
// transaction. It never writes a localized field: it passes the adapter only
// the synced values (strapi/strapi#25802 is a sync that overwrote
// translations). The answer says, per translation, what was copied and which
// localized fields need a translator.
import { isDeepStrictEqual } from 'node:util';
import { z } from 'zod';
import type { CommonQueryMethods } from '../../db/pool.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { translationKinds, type AnyAdapter } from './model.ts';
import { staleFields } from './staleness.ts';

export const syncResultSchema = z
  .object({
    kind: z.enum(translationKinds),
    master_id: z.uuid(),
    synced_fields: z.array(z.string()).describe('The non-localized fields a sync copies for this kind'),
    inherited_fields: z.array(z.string()).describe('Non-localized fields translations read from the master live'),
    translations: z.array(
      z.object({
        id: z.uuid(),
        locale: z.string(),
        copied: z.array(z.string()).describe('Fields whose value the master’s replaced'),
        stale_fields: z.array(z.string()).describe('Localized fields that need a translator (never written by a sync)'),
      }),
    ),
  })
  .meta({ id: 'TranslationSyncResult' });

export type SyncResult = z.infer<typeof syncResultSchema>;

export async function syncTranslations(
  db: CommonQueryMethods,
  access: SiteAccess,
  adapter: AnyAdapter,
  id: string,
): Promise<SyncResult> {
  return db.transaction(async (tx) => {
    const group = await adapter.group(tx, access.site, id);
    adapter.requireChange(access, group.master);
    const wanted = adapter.syncedValues(group.master.item);
    const localized = adapter.localizedFields(group).map((field) => field.name);
    const translations = [];
    for (const translation of group.translations) {
      const held = adapter.syncedValues(translation.item);
      const copied = Object.keys(wanted).filter((name) => !isDeepStrictEqual(held[name], wanted[name]));
      if (copied.length) await adapter.applySync(tx, access, translation, wanted);
      translations.push({
        id: translation.id,
        locale: translation.locale,
        copied,
        stale_fields: staleFields(group.master, translation, localized),
      });
    }
    return {
      kind: adapter.kind,
      master_id: group.master.id,
      synced_fields: Object.keys(wanted),
      inherited_fields: adapter.inheritedFields(group),
      translations,
    };
  });
}
