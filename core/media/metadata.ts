// Alt text, caption and tags written by a job (worker/jobs/media_metadata.ts):
// what it describes the item from, and where its words go.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';

const toDescribeSchema = z.object({
  kind: z.string(),
  mime_type: z.string(),
  width: z.number().nullable(),
  height: z.number().nullable(),
  duration_seconds: z.number().nullable(),
  dominant_color: z.string().nullable(),
  file_name: z.string(),
  title: z.string(),
  alt: z.string(),
  caption: z.string(),
  tags: z.array(z.string()),
  preview_key: z.string().nullable(),
});

/**
 * The item's facts and current words, and its narrowest image variant as a
 * preview for a model that looks (null for an item with none); null when the
 * item was deleted since the submit.
 */
export async function mediaToDescribe(
  db: CommonQueryMethods,
  siteId: string,
  id: string,
): Promise<z.infer<typeof toDescribeSchema> | null> {
  return db.maybeOne(sql.type(toDescribeSchema)`
    select kind, mime_type, width, height, duration_seconds, dominant_color, file_name, title, alt, caption, tags,
           (select v->>'key' from jsonb_array_elements(variants) v where v->>'mime_type' like 'image/%' order by (v->>'width')::int limit 1) as preview_key
    from media_items where id = ${id} and site_id = ${siteId}`);
}

export type Description = { alt: string; caption: string; tags: string[] };

export async function saveDescription(db: CommonQueryMethods, id: string, description: Description): Promise<void> {
  await db.query(sql.typeAlias('void')`
    update media_items set alt = ${description.alt}, caption = ${description.caption}, tags = ${sql.array(description.tags, 'text')}
    where id = ${id}`);
}
