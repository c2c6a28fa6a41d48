// Video generation by the back end the endpoint chose: composed here, made by
// an OpenAI-compatible /videos API, or handed to the media provider whose
// webhook delivers it. Whatever made it, the file must read as video; it is
// stored under a key derived from the job (a rerun overwrites), with a poster,
// and the settling transaction records the item and debits its seconds.
import { createReadStream } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { videoJobInput, type VideoJobInput } from '../../core/media/video.ts';
import { folderStillThere, type StoredVariant } from '../../core/media/items.ts';
import { probe, withTemporaryDir } from '../media/ffmpeg.ts';
import { storePoster } from '../media/poster.ts';
import { deliveredFile, submitToMediaProvider } from '../providers/mediaprovider.ts';
import { composeLocally } from '../providers/video/local.ts';
import { renderByOpenAi } from '../providers/video/openai.ts';
import { permanent } from '../../core/jobs/errors.ts';
import { defineJob, type JobContext, type Outcome } from './handler.ts';

async function store(
  input: VideoJobInput,
  file: string,
  poster: Buffer | null,
  context: JobContext,
  provider: string,
  extra: Record<string, unknown> = {},
): Promise<Outcome> {
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
    output: {
      backend: input.backend,
      provider,
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

export default defineJob({
  input: videoJobInput,
  async run(input, context) {
    const { request, backend } = input;
    if (backend === 'mediaprovider') {
      await context.progress(0.1, 'submitting to the media provider');
      const ref = await submitToMediaProvider(
        context.config,
        'video',
        request,
        { id: context.job.id, siteId: context.job.site_id },
        context.signal,
      );
      return { status: 'waiting', provider: 'mediaprovider', providerRef: ref };
    }
    return withTemporaryDir(async (dir) => {
      if (backend === 'openai')
        return store(input, await renderByOpenAi(request, dir, context), null, context, 'openai');
      const composed = await composeLocally(request, dir, context);
      return store(input, composed.file, composed.poster, context, 'local', { scenes: composed.scenes });
    });
  },
  async finish(input, result, context) {
    const video = await deliveredFile(result, 'video', context);
    return withTemporaryDir(async (dir) => {
      const file = path.join(dir, 'delivered.mp4');
      await writeFile(file, video);
      return store(input, file, null, context, 'mediaprovider');
    });
  },
});
