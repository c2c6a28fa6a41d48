// The three video-generation endpoints: one request shape, three back ends
// (each chosen by configuration). Everything that would make the job fail at
// once is refused here instead, before credits are reserved: a back end not
// configured (503), a folder or scene image not of this site, a narration too
// long for its scene, what the chosen back end cannot do (422).
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem, problemType, type ProblemField } from '../../core/errors.ts';
import type { Actor } from '../../core/actor.ts';
import { mediaAccess, requireSiteFolder } from '../../core/media/access.ts';
import {
  estimateVideoSeconds,
  missingVideoConfig,
  overlongScenes,
  unsupportedByBackend,
  videoBackend,
  videoRequest,
  type VideoRequest,
} from '../../core/media/video.ts';
import { jobResponses, submitAndAnswer } from '../jobs/answer.ts';
import { defineRoute } from '../route.ts';
import { siteParams } from '../schemas.ts';

async function checkReferences(
  db: CommonQueryMethods,
  actor: Actor,
  identifier: string,
  request: VideoRequest,
): Promise<void> {
  const { site } = await mediaAccess(db, actor, identifier, true);
  if (request.folder_id) await requireSiteFolder(db, site.id, request.folder_id, 'folder_id');
  const wanted = (request.scenes ?? []).flatMap((scene, index) =>
    scene.media_id ? [{ index, id: scene.media_id }] : [],
  );
  if (!wanted.length) return;
  const images = await db.anyFirst(
    sql.type(
      z.object({ id: z.string() }),
    )`select id from media_items where site_id = ${site.id} and kind = 'image' and id = any(${sql.array(
      wanted.map((scene) => scene.id),
      'uuid',
    )})`,
  );
  const errors: ProblemField[] = wanted
    .filter((scene) => !images.includes(scene.id.toLowerCase()))
    .map((scene) => ({ path: `body.scenes.${scene.index}.media_id`, message: 'no such image in this site' }));
  if (errors.length) throw new Problem(422, 'A scene names an image that is not in this site.', { errors });
}

const endpoints = [
  { path: '/{site_identifier}/media/generatevideo', endpoint: 'main', variable: 'VIDEO_PROVIDER' },
  {
    path: '/{site_identifier}/media/generatevideo-varianta',
    endpoint: 'varianta',
    variable: 'VIDEO_VARIANT_A_PROVIDER',
  },
  {
    path: '/{site_identifier}/media/generatevideo-variantb',
    endpoint: 'variantb',
    variable: 'VIDEO_VARIANT_B_PROVIDER',
  },
] as const;

export const routes = endpoints.map(({ path, endpoint, variable }) =>
  defineRoute({
    key: `POST ${path}`,
    idempotent: true,
    description:
      `Makes a video (H.264 MP4 with a poster) from a prompt (each sentence a narrated scene) or a script of scenes, as a job; the back end is ${variable}: ` +
      '`local` pictures each scene with the image provider, narrates it with the speech provider and moves over the picture with ffmpeg (progress per scene); ' +
      '`mediaprovider` hands the work to the media provider, whose signed webhook delivers the file; `openai` asks an OpenAI-compatible /videos API for a 4, 8 or 12 s clip. ' +
      'Credits for the longest the video can be are reserved (402 when not available); its seconds are debited. 503 when the back end is not configured. ' +
      'Honours Idempotency-Key and `Prefer: wait=N`.',
    request: { params: siteParams, body: videoRequest },
    responses: jobResponses,
    async handler({ params, body }, context, { req }) {
      const { services, actor } = context;
      const backend = videoBackend(services.config, endpoint);
      await services.db.connect((connection) => checkReferences(connection, actor, params.site_identifier, body));
      const overlong = overlongScenes(body);
      if (overlong.length)
        throw new Problem(422, 'A scene’s narration is too long for one scene.', { errors: overlong });
      const unsupported = unsupportedByBackend(body, backend);
      if (unsupported.length)
        throw new Problem(422, `${variable}=${backend} cannot make this video.`, { errors: unsupported });
      const missing = missingVideoConfig(services.config, backend);
      if (missing)
        throw new Problem(503, `${variable}=${backend}: ${missing}`, {
          type: problemType('not-configured'),
          title: 'Not configured',
        });
      return submitAndAnswer(context, req.get('prefer'), params.site_identifier, {
        kind: 'video',
        input: { request: body, backend },
        estimatedUnits: estimateVideoSeconds(body, backend),
        scope: 'media:write',
      });
    },
  }),
);
