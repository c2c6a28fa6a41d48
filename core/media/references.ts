// What still uses a media item. Deleting an item in use answers 409 naming
// what uses it, unless the caller forces it. Today the users are jobs not yet
// finished that will read the item: an AI edit of it (or with it as the mask),
// its metadata, a video that shows it; content elements whose data names it,
// posts that feature it, and agents whose avatar it is. A forced delete leaves
// those jobs to fail as media_missing, which charges nothing, the elements'
// values in place, read as no item, the posts without their image and the
// agents without an avatar.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem } from '../errors.ts';

export const mediaReferenceSchema = z
  .object({ media_id: z.uuid(), type: z.enum(['job', 'element', 'post', 'agent']), id: z.uuid(), detail: z.string() })
  .meta({ id: 'MediaReference' });

export type MediaReference = z.infer<typeof mediaReferenceSchema>;

type Ids = ReturnType<typeof sql.fragment>;

const sources: ((siteId: string, ids: Ids) => ReturnType<typeof sql.fragment>)[] = [
  (siteId, ids) => sql.fragment`
    select m.id as media_id, 'job' as type, j.id, j.kind || ' job (' || j.status || ')' as detail
    from (${ids}) as m (id)
    join jobs j on j.site_id = ${siteId} and j.status in ('queued', 'running', 'waiting') and j.kind <> 'media_process'
     -- Ids are compared in lower case: an id may have been sent in upper case and stored as sent.
     and (lower(j.input->>'media_id') = m.id::text or lower(j.input->>'mask_media_id') = m.id::text
          or exists (select 1 from jsonb_array_elements(case jsonb_typeof(j.input->'request'->'scenes') when 'array' then j.input->'request'->'scenes' else '[]' end) as scene
                     where lower(scene->>'media_id') = m.id::text))`,
  (siteId, ids) => sql.fragment`
    select m.id as media_id, 'element' as type, e.id, 'element ' || e.name || ' (' || l.path || ')' as detail
    from (${ids}) as m (id)
    join content_element_media l on l.media_id = m.id and l.site_id = ${siteId}
    join content_elements e on e.id = l.element_id`,
  (siteId, ids) => sql.fragment`
    select m.id as media_id, 'post' as type, p.id, 'post ' || p.title || ' (featured image)' as detail
    from (${ids}) as m (id)
    join posts p on p.featured_media_id = m.id and p.site_id = ${siteId}`,
  // Agents are global: the ids are already the site's items.
  (_siteId, ids) => sql.fragment`
    select m.id as media_id, 'agent' as type, a.id, 'agent ' || a.name || ' (avatar)' as detail
    from (${ids}) as m (id)
    join agents a on a.avatar_media_id = m.id`,
];

/** What uses the items `ids` selects (a query answering one column of media ids), at most 50. */
export async function referencesTo(
  db: CommonQueryMethods,
  siteId: string,
  ids: Ids,
): Promise<readonly MediaReference[]> {
  const union = sql.join(
    sources.map((source) => source(siteId, ids)),
    sql.fragment` union all `,
  );
  return db.any(sql.type(mediaReferenceSchema)`select * from (${union}) as found order by media_id, id limit 50`);
}

/** 409 naming what uses the items, unless `force`. */
export async function requireUnreferenced(
  db: CommonQueryMethods,
  siteId: string,
  ids: Ids,
  force: boolean,
): Promise<void> {
  if (force) return;
  const references = await referencesTo(db, siteId, ids);
  if (references.length) {
    throw new Problem(
      409,
      `In use: ${references.map((reference) => reference.detail).join('; ')}. Pass force=true to delete it anyway.`,
      {
        type: '/problems/media-in-use',
        title: 'Media in use',
        extensions: { references },
      },
    );
  }
}
