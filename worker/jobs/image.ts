// Image generation: the job's plan is tried in turn (worker/providers/chain.ts)
// until a provider makes the images, or takes the work and calls back later
// (the job then waits for its webhook, and `finish` collects them); each is
// checked to be an image, stored under a key derived from the job (a rerun
// overwrites), and the settling transaction records them as media items and
// debits one unit per image.
import sharp from 'sharp';
import { dimensions, imageJobInput, type ImageJobInput } from '../../core/media/generation.ts';
import { folderStillThere, type MediaDraft } from '../../core/media/items.ts';
import { isPending, type File } from '../../core/providers/capabilities.ts';
import { planFor, type PlannedCall } from '../../core/providers/plan.ts';
import { adapterFor } from '../../core/providers/registry.ts';
import { permanent } from '../../core/jobs/errors.ts';
import { inTurn } from '../providers/chain.ts';
import { renderLocal } from '../providers/image/local.ts';
import { defineJob, type JobContext, type Outcome } from '../job.ts';
import { callOf, webhookUrl } from './providers.ts';

/** What a local image says it is: an abstract placeholder, not a picture of the prompt. */
const placeholderAlt = 'An abstract placeholder picture made without an image model; it does not show the prompt.';

async function store(input: ImageJobInput, files: File[], call: PlannedCall, context: JobContext): Promise<Outcome> {
  const { job, storage, db } = context;
  const folder = await folderStillThere(db, job.site_id, input.folder_id);
  const placeholder = call.vendor === 'local';
  const media: MediaDraft[] = [];
  for (const [index, file] of files.entries()) {
    await context.progress(0.5 + (0.4 * index) / files.length, `storing image ${index + 1} of ${files.length}`);
    const meta = await sharp(file.bytes, { limitInputPixels: context.config.media.maxPixels })
      .metadata()
      .catch(() => null);
    if (!meta?.format || !meta.width)
      throw permanent('provider_invalid_response', 'The provider returned something that is not an image.');
    const format = meta.format === 'jpeg' ? 'jpeg' : meta.format;
    const key = `${job.tenant_id}/${job.site_id}/image-${job.id}-${index}.${format}`;
    const stored = await storage.put(key, file.bytes, `image/${format}`);
    media.push({
      kind: 'image',
      mimeType: `image/${format}`,
      sizeBytes: stored.size,
      storageKey: key,
      fileName: `generated-${index + 1}.${format}`,
      width: meta.width,
      height: meta.height ?? null,
      title: input.prompt.slice(0, 80),
      alt: placeholder ? placeholderAlt : input.prompt.slice(0, 1000),
      folderId: folder,
    });
  }
  return {
    status: 'succeeded',
    units: media.length,
    call,
    output: {
      provider: call.vendor,
      model: call.model,
      placeholder,
      count: media.length,
      size: input.size,
      seed: input.seed ?? null,
    },
    media,
  };
}

export default defineJob({
  input: imageJobInput,
  async run(input, context) {
    const plan = input.providers ?? planFor(context.config.providers, 'image', { model: input.model });
    await context.progress(0.1, 'generating');
    const { width, height } = dimensions(input.size);
    const { value, call } = await inTurn(
      'image',
      plan,
      context,
      async (call): Promise<File[] | { pending: true; ref: string }> => {
        if (call.vendor === 'local')
          return Promise.all(
            Array.from({ length: input.count }, async (_, index) => ({ bytes: await renderLocal(input, index) })),
          );
        return adapterFor(context.config, 'image', call.vendor).generate(
          {
            prompt: input.prompt,
            count: input.count,
            width,
            height,
            quality: input.quality,
            background: input.background,
            format: input.format,
            seed: input.seed,
          },
          { model: call.model, signal: context.signal, webhookUrl: webhookUrl(context, call.vendor) },
        );
      },
      (made) => (isPending(made) ? 'pending' : 'succeeded'),
    );
    if (isPending(value)) return { status: 'waiting', provider: call.vendor, providerRef: value.ref };
    return store(input, value, call, context);
  },
  async finish(input, delivered, context) {
    const call = callOf(input.providers, context, 'image');
    const adapter = adapterFor(context.config, 'image', call.vendor);
    if (!adapter.collect) throw permanent('provider_invalid_response', `${call.vendor} delivered images unasked.`);
    const files = await adapter.collect(delivered, { model: call.model, signal: context.signal });
    return store(input, files, call, context);
  },
});
