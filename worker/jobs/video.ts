// Video generation by the job's plan, tried in turn: composed here, or handed
// to a vendor's video model (Replicate, fal) whose webhook delivers it.
// Whatever made it, the file must read as video; it is stored under a key
// derived from the job (a rerun overwrites), with a poster, and the settling
// transaction records the item and debits its seconds.
import { createReadStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { clipPrompt, clipSeconds, frameOf, videoJobInput, type VideoJobInput } from '../../core/media/video.ts';
import { folderStillThere, type StoredVariant } from '../../core/media/items.ts';
import { probe, withTemporaryDir } from '../media/ffmpeg.ts';
import { storePoster } from '../media/poster.ts';
import { isPending } from '../../core/providers/capabilities.ts';
import { planFor, type PlannedCall } from '../../core/providers/plan.ts';
import { adapterFor } from '../../core/providers/registry.ts';
import { inTurn } from '../providers/chain.ts';
import { composeLocally } from '../providers/video/local.ts';
import { permanent } from '../../core/jobs/errors.ts';
import { defineJob, type JobContext, type Outcome } from '../job.ts';
import { callOf, webhookUrl } from './providers.ts';

async function store(
  input: VideoJobInput,
  file: string,
  poster: Buffer | null,
  context: JobContext,
  call: PlannedCall,
  extra: Record<string, unknown> = {},
): Promise<Outcome> {
  const provider = call.vendor;
  const { job, storage, db, config, signal } = context;
  const probed = await probe(config, file).catch(() => null);
  if (!probed?.width || !(probed.durationSeconds > 0))
    throw permanent('provider_invalid_response', `The ${provider} back end made something that is not a video.`);
  if (!probed.formatName.split(',').includes('mp4'))
    throw permanent('provider_invalid_response', `The ${provider} back end made ${probed.formatName}, not MP4.`);
  await context.progress(0.95, 'storing');
  const key = `${job.tenant_id}/${job.site_id}/video-${job.id}.mp4`;
  const stored = await storage.put(key, createReadStream(file), 'video/mp4');
  let variant: StoredVariant;
  if (poster) {
    variant = {
      name: 'poster',
      key: `${key}.poster.jpg`,
      mime_type: 'image/jpeg',
      width: probed.width,
      height: probed.height,
      size_bytes: poster.length,
    };
    await storage.put(variant.key, poster, 'image/jpeg');
  } else {
    variant = await storePoster(config, storage, file, key, probed.durationSeconds, signal);
  }
  const { request } = input;
  const folder = await folderStillThere(db, job.site_id, request.folder_id);
  const seconds = Math.round(probed.durationSeconds * 1000) / 1000;
  const title =
    request.title ??
    (
      request.prompt ??
      request.scenes?.map((scene) => scene.narration ?? scene.image_prompt ?? '').join(' ') ??
      ''
    ).slice(0, 80);
  return {
    status: 'succeeded',
    units: seconds,
    call,
    output: {
      provider,
      model: call.model,
      placeholder: provider === 'local',
      duration_seconds: seconds,
      codec: probed.codec,
      width: probed.width,
      height: probed.height,
      size_bytes: stored.size,
      ...extra,
    },
    media: [
      {
        kind: 'video',
        mimeType: 'video/mp4',
        sizeBytes: stored.size,
        storageKey: key,
        fileName: 'generated.mp4',
        durationSeconds: seconds,
        width: probed.width,
        height: probed.height,
        title,
        folderId: folder,
        variants: [variant],
      },
    ],
  };
}

/** A delivered clip, written where ffmpeg can read it, then stored. */
async function storeClip(input: VideoJobInput, bytes: Buffer, call: PlannedCall, context: JobContext) {
  return withTemporaryDir(async (dir) => {
    const file = path.join(dir, 'delivered.mp4');
    await writeFile(file, bytes);
    return store(input, file, null, context, call);
  });
}

export default defineJob({
  input: videoJobInput,
  async run(input, context) {
    const { request } = input;
    const plan = input.providers ?? planFor(context.config.providers, 'video', { model: request.model });
    const { value, call } = await inTurn(
      'video',
      plan,
      context,
      async (call) => {
        if (call.vendor === 'local')
          return withTemporaryDir(async (dir) => {
            const composed = await composeLocally(request, dir, context);
            return store(input, composed.file, composed.poster, context, call, { scenes: composed.scenes });
          });
        await context.progress(0.1, `asking ${call.vendor} for the clip`);
        const clip = {
          prompt: clipPrompt(request),
          seconds: clipSeconds(request, call),
          ...frameOf(request, call),
          seed: request.seed,
        };
        return adapterFor(context.config, 'video', call.vendor).generate(clip, {
          model: call.model,
          signal: context.signal,
          webhookUrl: webhookUrl(context, call.vendor),
        });
      },
      (made) => (isPending(made) ? 'pending' : 'succeeded'),
    );
    if (isPending(value)) return { status: 'waiting', provider: call.vendor, providerRef: value.ref };
    if ('bytes' in value) return storeClip(input, value.bytes, call, context);
    return value;
  },
  async finish(input, delivered, context) {
    const call = callOf(input.providers, context, 'video');
    const adapter = adapterFor(context.config, 'video', call.vendor);
    if (!adapter.collect) throw permanent('provider_invalid_response', `${call.vendor} delivered a video unasked.`);
    const clip = await adapter.collect(delivered, { model: call.model, signal: context.signal });
    return storeClip(input, clip.bytes, call, context);
  },
});
