// Image generation: the provider makes the images, each is checked to be an
// image, stored under a key derived from the job (a rerun overwrites), and
// the settling transaction records them as media items and debits one unit
// per image.
import sharp from 'sharp';
import { imageRequest } from '../../core/media/generation.ts';
import { folderStillThere, type MediaDraft } from '../../core/media/items.ts';
import { imageProvider } from '../providers/image/provider.ts';
import { permanent } from '../../core/jobs/errors.ts';
import { defineJob } from './handler.ts';

export default defineJob({
  input: imageRequest,
  async run(input, context) {
    const { job, storage, db } = context;
    const provider = imageProvider(context.config);
    await context.progress(0.1, 'generating');
    const images = await provider.generate(input, context.signal);
    const folder = await folderStillThere(db, job.site_id, input.folder_id);
    const media: MediaDraft[] = [];
    for (const [index, image] of images.entries()) {
      await context.progress(0.5 + (0.4 * index) / images.length, `storing image ${index + 1} of ${images.length}`);
      const meta = await sharp(image, { limitInputPixels: context.config.media.maxPixels })
        .metadata()
        .catch(() => null);
      if (!meta?.format || !meta.width)
        throw permanent('provider_invalid_response', 'The provider returned something that is not an image.');
      const format = meta.format === 'jpeg' ? 'jpeg' : meta.format;
      const key = `${job.tenant_id}/${job.site_id}/image-${job.id}-${index}.${format}`;
      const stored = await storage.put(key, image, `image/${format}`);
      media.push({
        kind: 'image',
        mimeType: `image/${format}`,
        sizeBytes: stored.size,
        storageKey: key,
        fileName: `generated-${index + 1}.${format}`,
        width: meta.width,
        height: meta.height ?? null,
        title: input.prompt.slice(0, 80),
        alt: input.prompt.slice(0, 1000),
        folderId: folder,
      });
    }
    return {
      status: 'succeeded',
      units: media.length,
      output: { provider: provider.name, count: media.length, size: input.size, seed: input.seed ?? null },
      media,
    };
  },
});
