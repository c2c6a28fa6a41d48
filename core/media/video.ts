// Video generation, as submitted: shared by the three endpoints that validate
// it and the worker job that makes it. A video is a prompt (each sentence a
// scene) or a script of scenes; each scene has a picture (generated from its
// prompt, or an image of the site) and optional narration, and lasts as long
// as asked or as its narration needs.
import { z } from 'zod';
import { atLeastOneOf, exactlyOneOf, notBoth } from '../field-rules.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { Problem, problemType, type ProblemField } from '../errors.ts';
import type { Site } from '../tenancy/sites.ts';
import { requireSiteFolder } from './access.ts';
import { estimateSeconds, speechInput } from './speech.ts';

export const videoSizes = ['640x360', '1280x720', '720x1280', '1080x1080'] as const;

/** Which back end makes the video: this machine, the webhook-completed media provider, or an OpenAI-compatible /videos API. */
export const videoBackends = ['local', 'mediaprovider', 'openai'] as const;
export type VideoBackend = (typeof videoBackends)[number];

export const maxSceneSeconds = 60;
export const maxScenes = 12;
const defaultSecondsPerScene = 4;

const scene = z
  .strictObject({
    narration: z.string().trim().min(1).max(1000).optional().describe('Spoken over the scene'),
    image_prompt: z.string().trim().min(1).max(1000).optional().describe('What to picture; the narration when absent'),
    media_id: z.uuid().optional().describe('An image of this site to show instead of a generated one'),
    duration_seconds: z
      .number()
      .min(1)
      .max(maxSceneSeconds)
      .optional()
      .describe('At least this long; longer when the narration needs it'),
  })
  .refine(
    (value) => value.narration || value.image_prompt || value.media_id,
    'needs narration, image_prompt or media_id',
  )
  .meta(atLeastOneOf('narration', 'image_prompt', 'media_id'));

export const videoRequest = z
  .strictObject({
    prompt: z
      .string()
      .trim()
      .min(1)
      .max(4000)
      .optional()
      .describe('Each sentence becomes a scene, narrated (at most 12)'),
    scenes: z.array(scene).min(1).max(maxScenes).optional().describe('A script, instead of a prompt'),
    size: z.enum(videoSizes).default('1280x720'),
    duration_seconds: z
      .number()
      .min(1)
      .max(maxScenes * maxSceneSeconds)
      .optional()
      .describe(
        'How long the whole video should be: the scenes that name no duration share what the others leave ' +
          '(each at least 1 s, at most 60 s; longer where narration needs it). Instead of seconds_per_scene.',
      ),
    seconds_per_scene: z
      .number()
      .min(1)
      .max(maxSceneSeconds)
      .optional()
      .describe(`For scenes that name no duration; default ${defaultSecondsPerScene}`),
    narrate: z.boolean().default(true).describe('Speak the narration (else the scenes are silent)'),
    voice: speechInput.shape.voice,
    language: speechInput.shape.language,
    speed: speechInput.shape.speed,
    style: z.enum(['natural', 'vivid', 'flat']).default('natural'),
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1)
      .optional(),
    folder_id: z.uuid().optional().describe('Where the video goes; the top level when absent'),
    title: z.string().trim().max(200).optional(),
  })
  .refine((value) => Boolean(value.prompt) !== Boolean(value.scenes), {
    message: 'give either prompt or scenes',
    path: ['prompt'],
  })
  .refine((value) => value.duration_seconds === undefined || value.seconds_per_scene === undefined, {
    message: 'give duration_seconds or seconds_per_scene, not both',
    path: ['duration_seconds'],
  })
  .meta({
    id: 'VideoGenerationRequest',
    ...exactlyOneOf('prompt', 'scenes'),
    ...notBoth('duration_seconds', 'seconds_per_scene'),
  });

export type VideoRequest = z.output<typeof videoRequest>;

/** What the worker receives: the request and the back end the endpoint chose. */
export const videoJobInput = z.object({ request: videoRequest, backend: z.enum(videoBackends) });
export type VideoJobInput = z.output<typeof videoJobInput>;

export type PlannedScene = {
  narration: string | null;
  imagePrompt: string;
  mediaId: string | null;
  minSeconds: number;
};

/** Sentences of a prompt: the text up to each . ! or ? followed by a space, or a line break. */
function sentences(prompt: string): string[] {
  return prompt
    .split(/(?<=[.!?])\s+|\n+/)
    .map((part) => part.trim())
    .filter(Boolean);
}

export function planScenes(request: VideoRequest): PlannedScene[] {
  const script =
    request.scenes ??
    sentences(request.prompt ?? '').map((sentence) => ({ narration: sentence, image_prompt: sentence }));
  // A prompt of more sentences than scenes allowed: the rest are spoken over the last scene.
  const merged =
    script.length > maxScenes && !request.scenes
      ? [
          ...script.slice(0, maxScenes - 1),
          {
            narration: script
              .slice(maxScenes - 1)
              .map((part) => part.narration)
              .join(' '),
            image_prompt: script[maxScenes - 1]!.image_prompt,
          },
        ]
      : script;
  const own = (part: (typeof merged)[number]) => ('duration_seconds' in part ? part.duration_seconds : undefined);
  const perScene = secondsPerScene(request, merged.map(own));
  return merged.map((part) => {
    const narration = request.narrate ? (part.narration ?? null) : null;
    return {
      narration,
      imagePrompt: part.image_prompt ?? part.narration ?? request.prompt ?? 'scene',
      mediaId: 'media_id' in part ? (part.media_id ?? null) : null,
      minSeconds: own(part) ?? perScene,
    };
  });
}

/** How long a scene that names no duration lasts: as asked, or its share of the whole video's duration. */
function secondsPerScene(request: VideoRequest, durations: (number | undefined)[]): number {
  if (request.duration_seconds === undefined) return request.seconds_per_scene ?? defaultSecondsPerScene;
  const fixed = durations.reduce<number>((sum, seconds) => sum + (seconds ?? 0), 0);
  const open = durations.filter((seconds) => seconds === undefined).length;
  return open === 0 ? 0 : Math.min(maxSceneSeconds, Math.max(1, (request.duration_seconds - fixed) / open));
}

// A scene's narration is followed by this much quiet before the next one.
export const narrationTailSeconds = 0.5;

const spokenSeconds = (scene: PlannedScene, request: VideoRequest) =>
  scene.narration ? estimateSeconds({ text: scene.narration, speed: request.speed }) + narrationTailSeconds : 0;

/** Problems with scenes whose narration may not fit in one scene, as 422 errors. */
export function overlongScenes(request: VideoRequest): { path: string; message: string }[] {
  return planScenes(request).flatMap((scene, index) =>
    spokenSeconds(scene, request) > maxSceneSeconds
      ? [
          {
            path: request.scenes ? `body.scenes.${index}.narration` : 'body.prompt',
            message: `scene ${index + 1}'s narration may last longer than ${maxSceneSeconds} s; split it`,
          },
        ]
      : [],
  );
}

/** The longest the local back end's video can be, for the credit reservation. */
function localEstimate(request: VideoRequest): number {
  return planScenes(request).reduce(
    (total, scene) => total + Math.min(maxSceneSeconds, Math.max(scene.minSeconds, spokenSeconds(scene, request))),
    0,
  );
}

// OpenAI's /videos makes clips of 4, 8 or 12 seconds, landscape or portrait.
export const openAiSeconds = [4, 8, 12] as const;
export const openAiSizes: readonly string[] = ['1280x720', '720x1280'];

/** What a back end other than local cannot do with this request, as 422 errors. */
export function unsupportedByBackend(
  request: VideoRequest,
  backend: VideoBackend,
): { path: string; message: string }[] {
  if (backend === 'local') return [];
  const errors = (request.scenes ?? []).flatMap((scene, index) =>
    scene.media_id
      ? [{ path: `body.scenes.${index}.media_id`, message: `the ${backend} back end cannot show images of the site` }]
      : [],
  );
  if (backend === 'openai' && !openAiSizes.includes(request.size))
    errors.push({ path: 'body.size', message: `the openai back end makes ${openAiSizes.join(' or ')}` });
  return errors;
}

/** The clip length asked of an OpenAI-compatible back end: the shortest that holds the plan, at most 12 s. */
export function openAiClipSeconds(request: VideoRequest): number {
  const wanted = localEstimate(request);
  return openAiSeconds.find((seconds) => seconds >= wanted) ?? 12;
}

/** Seconds of video to reserve credits for; what is made is debited, never more. */
export function estimateVideoSeconds(request: VideoRequest, backend: VideoBackend): number {
  return Math.ceil(backend === 'openai' ? openAiClipSeconds(request) : localEstimate(request));
}

/** The back end each endpoint uses, from configuration. */
export function videoBackend(config: Config, endpoint: 'main' | 'varianta' | 'variantb'): VideoBackend {
  return config.video.backends[endpoint];
}

/** Why a back end cannot run with this configuration, or null when it can. */
export function missingVideoConfig(config: Config, backend: VideoBackend): string | null {
  if (backend === 'openai' && !config.ai.baseUrl)
    return 'The openai video back end needs AI_BASE_URL (and usually AI_API_KEY).';
  // The local back end pictures and narrates with the configured image and speech providers.
  if (
    backend === 'local' &&
    !config.ai.baseUrl &&
    (config.images.provider === 'openai' || config.speech.provider === 'openai')
  ) {
    return 'The local video back end uses IMAGE_PROVIDER / SPEECH_PROVIDER=openai, which need AI_BASE_URL.';
  }
  if (
    backend === 'mediaprovider' &&
    (!config.mediaProvider.url || !config.mediaProvider.webhookSecret || !config.publicUrl)
  ) {
    return 'The mediaprovider video back end needs MEDIA_PROVIDER_URL, MEDIA_PROVIDER_WEBHOOK_SECRET and PUBLIC_URL.';
  }
  return null;
}

/** The endpoints and the variable that chooses each one's back end. */
export const videoEndpoints = {
  main: 'VIDEO_PROVIDER',
  varianta: 'VIDEO_VARIANT_A_PROVIDER',
  variantb: 'VIDEO_VARIANT_B_PROVIDER',
} as const;

/** The folder and the scene images a request names must be this site's: 422 at each that is not. */
async function requireReferences(db: CommonQueryMethods, site: Site, request: VideoRequest): Promise<void> {
  if (request.folder_id) await requireSiteFolder(db, site.id, request.folder_id, 'folder_id');
  const wanted = (request.scenes ?? []).flatMap((scene, index) =>
    scene.media_id ? [{ index, id: scene.media_id }] : [],
  );
  if (!wanted.length) return;
  const ids = sql.array(
    wanted.map((scene) => scene.id),
    'uuid',
  );
  const images = await db.anyFirst(
    sql.type(z.object({ id: z.string() }))`
      select id from media_items where site_id = ${site.id} and kind = 'image' and id = any(${ids})`,
  );
  const errors: ProblemField[] = wanted
    .filter((scene) => !images.includes(scene.id.toLowerCase()))
    .map((scene) => ({ path: `body.scenes.${scene.index}.media_id`, message: 'no such image in this site' }));
  if (errors.length) throw new Problem(422, 'A scene names an image that is not in this site.', { errors });
}

/**
 * Everything that would make the job fail at once, refused before credits
 * are reserved: a folder or scene image not of this site, a narration too
 * long for its scene, what the chosen back end cannot do (422), a back end
 * not configured (503). Answers the back end to use.
 */
export async function checkVideoRequest(
  db: CommonQueryMethods,
  config: Config,
  site: Site,
  endpoint: keyof typeof videoEndpoints,
  request: VideoRequest,
): Promise<VideoBackend> {
  const variable = videoEndpoints[endpoint];
  const backend = videoBackend(config, endpoint);
  await requireReferences(db, site, request);
  const overlong = overlongScenes(request);
  if (overlong.length) throw new Problem(422, 'A scene’s narration is too long for one scene.', { errors: overlong });
  const unsupported = unsupportedByBackend(request, backend);
  if (unsupported.length) {
    throw new Problem(422, `${variable}=${backend} cannot make this video.`, { errors: unsupported });
  }
  const missing = missingVideoConfig(config, backend);
  if (missing) {
    throw new Problem(503, `${variable}=${backend}: ${missing}`, {
      type: problemType('not-configured'),
      title: 'Not configured',
    });
  }
  return backend;
}
