// Media as translations see them: an item has no locale of its own (it is in
// the site's default one) and a translation is a media_translations row of
// its alt text, title and caption in another locale (db/migrations/0025). The
// file and everything else about it is the item's: nothing to copy, so a sync
// only reports staleness. Authors change only the media they added.
import { z } from 'zod';
import { sql } from '../../db/pool.ts';
import { actorUserId } from '../actor.ts';
import { Problem, notFound } from '../errors.ts';
import { requireOwnChange } from '../media/access.ts';
import { mediaChanges } from '../media/library.ts';
import { groupOf, memberRow } from './group.ts';
import type { TranslationAdapter } from './model.ts';

const textItem = z.object({
  id: z.uuid(),
  alt: z.string(),
  title: z.string(),
  caption: z.string(),
  created_by: z.uuid().nullable(),
});
type TextItem = z.infer<typeof textItem>;

const row = memberRow.extend(textItem.shape);

// The item's own limits on its text (PATCH /{site}/media/{media_id}), applied to translations of it.
const { alt, title, caption } = mediaChanges.shape;
const mediaText = z.object({ alt, title, caption });

export const mediaAdapter: TranslationAdapter<TextItem> = {
  kind: 'media',
  noun: 'media item',
  async group(db, site, id) {
    // By the item's id or one of its translations' (two index lookups), then the item and its translations.
    const rows = await db.any(sql.type(row)`
      with grp (id) as (
        select id from media_items where id = ${id} and site_id = ${site.id}
        union all
        select media_id from media_translations where id = ${id} and site_id = ${site.id}
      )
      select m.id, null::uuid as master_id, ${site.default_locale} as locale, m.status, m.updated_at,
             translation_localized('media', to_jsonb(m)) as values,
             translation_hashes(translation_localized('media', to_jsonb(m))) as hashes, '{}'::jsonb as taken,
             m.alt, m.title, m.caption, m.created_by
      from media_items m join grp on grp.id = m.id
      union all
      select t.id, t.media_id, t.locale, null, t.updated_at, translation_localized('media', to_jsonb(t)),
             translation_hashes(translation_localized('media', to_jsonb(t))), coalesce(s.fields, '{}'),
             t.alt, t.title, t.caption, t.created_by
      from media_translations t join grp on grp.id = t.media_id
      left join translation_states s on s.translation_id = t.id
      order by master_id nulls first, locale`);
    if (!rows.length || rows[0]!.master_id !== null) throw notFound('No such media item.');
    return groupOf(
      rows,
      rows.map((found) => textItem.parse(found)),
    );
  },
  localizedFields: () => [
    { name: 'alt', format: 'plain' },
    { name: 'title', format: 'plain' },
    { name: 'caption', format: 'plain' },
  ],
  syncedValues: () => ({}),
  inheritedFields: () => ['file', 'kind', 'tags', 'focal_point', 'folder_id'],
  requireChange: (access, member) => requireOwnChange(access, member.item.created_by, 'the media they added'),
  async write(db, { site, actor }, { master }, locale, values) {
    // The item's own limits (a long machine translation is refused, not cut).
    const checked = mediaText.safeParse(values);
    if (!checked.success)
      throw new Problem(422, 'The translation is longer than the media item’s fields allow.', {
        errors: checked.error.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message })),
      });
    const text = (name: 'alt' | 'title' | 'caption') => checked.data[name] ?? null;
    const userId = actorUserId(actor);
    return db.oneFirst(sql.type(z.object({ id: z.uuid() }))`
      insert into media_translations as t (tenant_id, site_id, media_id, locale, alt, title, caption, created_by, updated_by)
      values (${site.tenant_id}, ${site.id}, ${master.id}, ${locale}, ${text('alt') ?? ''}, ${text('title') ?? ''},
              ${text('caption') ?? ''}, ${userId}, ${userId})
      on conflict (media_id, locale) do update set
        alt = coalesce(${text('alt')}, t.alt), title = coalesce(${text('title')}, t.title),
        caption = coalesce(${text('caption')}, t.caption), updated_by = ${userId}
      returning id`);
  },
  async applySync() {
    // Nothing stored to copy: see the top of this file.
  },
};
