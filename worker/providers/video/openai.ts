// Video by an OpenAI-compatible /videos API: the clip is created, then polled
// every VIDEO_POLL_INTERVAL_MS until it is completed or failed, then
// downloaded. The provider's id is kept on the job as soon as it is known, so
// a rerun after a crash picks up the same clip instead of paying for another.
import path from 'node:path';
import { writeFile } from 'node:fs/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { sql } from '../../../db/pool.ts';
import { openAiClipSeconds, type VideoRequest } from '../../../core/media/video.ts';
import { permanent } from '../../../core/jobs/errors.ts';
import type { JobContext } from '../../jobs/handler.ts';
import { callProvider, readBody, readJson } from '../../../core/providers/http.ts';

const name = 'The video provider';
const clip = z.object({
  id: z.string().min(1).max(200),
  status: z.string(),
  progress: z.number().optional(),
  error: z.object({ message: z.string().optional() }).nullish(),
});

/** What the clip shows: the prompt, or the script's scenes in order. */
const describe = (request: VideoRequest) =>
  request.prompt ?? (request.scenes ?? []).map((scene) => scene.image_prompt ?? scene.narration ?? '').join(' ');

export async function renderByOpenAi(request: VideoRequest, dir: string, context: JobContext): Promise<string> {
  const { config, job, signal } = context;
  const call = (url: string, json?: unknown) =>
    callProvider(name, {
      url: `${config.ai.baseUrl}${url}`,
      method: json === undefined ? 'GET' : 'POST',
      apiKey: config.ai.apiKey,
      json,
      timeoutMs: config.ai.timeoutMs,
      signal,
    });
  const read = async (response: Response) => {
    const body = clip.safeParse(await readJson(name, response));
    if (!body.success) throw permanent('provider_invalid_response', `${name} answered without a video id and status.`);
    return body.data;
  };

  let id = job.provider === 'openai' ? job.provider_ref : null;
  if (!id) {
    const created = await read(
      await call('/videos', {
        model: config.video.model,
        prompt: describe(request),
        seconds: String(openAiClipSeconds(request)),
        size: request.size,
      }),
    );
    id = created.id;
    await context.db.query(
      sql.typeAlias('void')`update jobs set provider = 'openai', provider_ref = ${id} where id = ${job.id}`,
    );
  }
  const deadline = Date.now() + config.video.renderTimeoutMs;
  for (;;) {
    const state = await read(await call(`/videos/${encodeURIComponent(id)}`));
    if (state.status === 'completed') break;
    // Anything but queued or in progress (failed, cancelled, expired...) will not become a video.
    if (state.status !== 'queued' && state.status !== 'in_progress') {
      throw permanent(
        'provider_rejected',
        `${name} could not make the video (${state.status}): ${state.error?.message ?? 'no reason given'}.`,
      );
    }
    if (Date.now() > deadline)
      throw permanent(
        'provider_timeout',
        `${name} had not finished the video after ${config.video.renderTimeoutMs} ms.`,
      );
    await context.progress(
      0.1 + 0.7 * Math.min(1, (state.progress ?? 0) / 100),
      `rendering at the provider (${state.status})`,
    );
    await sleep(config.video.pollIntervalMs, undefined, { signal });
  }
  await context.progress(0.85, 'downloading');
  const file = path.join(dir, 'video.mp4');
  await writeFile(file, await readBody(name, await call(`/videos/${encodeURIComponent(id)}/content`)));
  return file;
}
