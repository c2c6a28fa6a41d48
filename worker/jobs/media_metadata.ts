// Alt text, caption and tags for a media item, written into the item: empty
// fields only, unless asked to overwrite. One unit per item.
import { z } from 'zod';
import { mediaToDescribe, saveDescription } from '../../core/media/metadata.ts';
import { usesLanguageModel } from '../providers/text/chat.ts';
import { describeLocally, describeWithProvider } from '../providers/text/describe.ts';
import { permanent } from '../../core/jobs/errors.ts';
import { defineJob } from '../job.ts';

export default defineJob({
  input: z.object({ media_id: z.uuid(), overwrite: z.boolean().default(false) }),
  async run({ media_id: mediaId, overwrite }, context) {
    const { db, job, config } = context;
    const item = await mediaToDescribe(db, job.site_id, mediaId);
    if (!item) throw permanent('media_missing', 'The media item was deleted before it was described.');
    await context.progress(0.2, 'describing');
    let described;
    if (usesLanguageModel(config)) {
      const preview = item.preview_key ? await context.storage.read(item.preview_key) : null;
      described = await describeWithProvider(context, item, preview ? Buffer.concat(await preview.toArray()) : null);
    } else {
      described = describeLocally(item);
    }
    const applied = {
      alt: overwrite || !item.alt ? described.alt : item.alt,
      caption: overwrite || !item.caption ? described.caption : item.caption,
      tags: overwrite || item.tags.length === 0 ? described.tags : item.tags,
    };
    await saveDescription(db, mediaId, applied);
    return { status: 'succeeded', units: 1, output: { media_id: mediaId, generated: described, applied, overwrite } };
  },
});
