// Video generation, as submitted: shared by the three endpoints that validate
// it and the worker job that makes it. A video is a prompt (each sentence a
// scene) or a script of scenes; each scene has a picture (generated from its
// prompt, or an image of the site) and optional narration, and lasts as long
// as asked or as its narration needs.
import { z } from 'zod';
import { atLeastOneOf, exactlyOneOf, notBoth } from '../field-rules.ts';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { Problem, type ProblemField } from '../errors.ts';
import { modelField, planField, planFor, specOf, type PlannedCall } from '../providers/plan.ts';
import { chainVariable, type ChainName } from '../providers/settings.ts';
import type { Site } from '../tenancy/sites.ts';
import { requireSiteFolder } from './access.ts';
import { closestSize } from '../providers/models.ts';
import { dimensions, sizeText } from './generation.ts';
import { estimateSeconds, speechInput } from './speech.ts';

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
    model: modelField('video'),
    size: sizeText
      .optional()
      .describe(
        'Width x height of the frame: a vendor’s model makes its own (a 422 names them), the local composer any. ' +
          'Absent: 1280x720, or the size the model makes nearest to it',
      ),
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
/** What the worker receives: the request, and its plan (composed here, or a vendor's video model). */
export const videoJobInput = z.object({ request: videoRequest, providers: planField });
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

/** The frame asked for when the request names none: 720p landscape, or the model's nearest. */
export const defaultFrame = { width: 1280, height: 720 };

/** The frame a call makes: the request's, or the one its model makes nearest to the default. */
export function frameOf(request: VideoRequest, call: PlannedCall): { width: number; height: number } {
  if (request.size) return dimensions(request.size);
  return call.vendor === 'local'
    ? defaultFrame
    : closestSize(specOf('video', call)?.sizes, defaultFrame.width, defaultFrame.height, 1280 * 720);
}

/** What a plan's call cannot do with this request, as 422 errors: a vendor's model shows no image of the site. */
function unsupportedBy(request: VideoRequest, call: PlannedCall): ProblemField[] {
  if (call.vendor === 'local') return [];
  return (request.scenes ?? []).flatMap((scene, index) =>
    scene.media_id
      ? [{ path: `body.scenes.${index}.media_id`, message: `${call.model} cannot show images of the site` }]
      : [],
  );
}

/** What a vendor's model is asked to show: the prompt, or the script's scenes in order. */
export const clipPrompt = (request: VideoRequest) =>
  request.prompt ?? (request.scenes ?? []).map((scene) => scene.image_prompt ?? scene.narration ?? '').join(' ');

/** The clip length asked of a vendor's model: the shortest it makes that holds the plan, else its longest. */
export function clipSeconds(request: VideoRequest, call: PlannedCall): number {
  const made = specOf('video', call)?.seconds ?? [];
  const wanted = localEstimate(request);
  return made.find((seconds) => seconds >= wanted) ?? made.at(-1) ?? Math.ceil(wanted);
}

/** Seconds of video to reserve credits for, the most any call of the plan may make; what is made is debited, never more. */
export function estimateVideoSeconds(request: VideoRequest, plan: PlannedCall[]): number {
  return Math.ceil(
    Math.max(...plan.map((call) => (call.vendor === 'local' ? localEstimate(request) : clipSeconds(request, call)))),
  );
}

/** The chain each endpoint runs, by the variable that names its providers. */
export const videoEndpoints = {
  main: 'video',
  varianta: 'video_variant_a',
  variantb: 'video_variant_b',
} as const satisfies Record<string, ChainName>;

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
 * long for its scene, a model not allowed or a size it cannot make, what no
 * provider of the chain can do (422), no provider configured (503). Answers
 * the plan: the chain's providers that can make this video.
 */
export async function checkVideoRequest(
  db: CommonQueryMethods,
  config: Pick<Config, 'providers'>,
  site: Site,
  endpoint: keyof typeof videoEndpoints,
  request: VideoRequest,
): Promise<PlannedCall[]> {
  const chain = videoEndpoints[endpoint];
  await requireReferences(db, site, request);
  const overlong = overlongScenes(request);
  if (overlong.length) throw new Problem(422, 'A scene’s narration is too long for one scene.', { errors: overlong });
  const plan = planFor(config.providers, chain, {
    model: request.model,
    size: request.size ? { ...dimensions(request.size), path: 'body.size' } : undefined,
  });
  const able = plan.filter((call) => unsupportedBy(request, call).length === 0);
  if (able.length === 0) {
    throw new Problem(422, `${chainVariable(chain)} names no provider that can make this video.`, {
      errors: unsupportedBy(request, plan[0]!),
    });
  }
  return able;
}
