// Alt text, caption and tags for a media item, written into the item: empty
// fields only, unless asked to overwrite. One unit per item.
import { z } from 'zod';
import { sql } from '../../db/pool.ts';
import { usesLanguageModel } from '../providers/text/chat.ts';
import { describeLocally, describeWithProvider, type Subject } from '../providers/text/describe.ts';
import { permanent } from '../../core/jobs/errors.ts';
import { defineJob } from './handler.ts';

const subject = z.object({
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

export default defineJob({
  input: z.object({ media_id: z.uuid(), overwrite: z.boolean().default(false) }),
  async run({ media_id: mediaId, overwrite }, context) {
    const { db, job, config } = context;
    const item = await db.maybeOne(sql.type(subject)`
      select kind, mime_type, width, height, duration_seconds, dominant_color, file_name, title, alt, caption, tags,
             (select v->>'key' from jsonb_array_elements(variants) v where v->>'mime_type' like 'image/%' order by (v->>'width')::int limit 1) as preview_key
      from media_items where id = ${mediaId} and site_id = ${job.site_id}`);
    if (!item) throw permanent('media_missing', 'The media item was deleted before it was described.');
    await context.progress(0.2, 'describing');
    let described;
    if (usesLanguageModel(config)) {
      const preview = item.preview_key ? await context.storage.read(item.preview_key) : null;
      described = await describeWithProvider(
        context,
        item as Subject,
        preview ? Buffer.concat(await preview.toArray()) : null,
      );
    } else {
      described = describeLocally(item as Subject);
    }
    const applied = {
      alt: overwrite || !item.alt ? described.alt : item.alt,
      caption: overwrite || !item.caption ? described.caption : item.caption,
      tags: overwrite || item.tags.length === 0 ? described.tags : item.tags,
    };
    await db.query(sql.typeAlias('void')`
      update media_items set alt = ${applied.alt}, caption = ${applied.caption}, tags = ${sql.array(applied.tags, 'text')} where id = ${mediaId}`);
    return { status: 'succeeded', units: 1, output: { media_id: mediaId, generated: described, applied, overwrite } };
  },
});
