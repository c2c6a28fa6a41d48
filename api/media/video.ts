// The three video-generation endpoints: one request shape, three chains of
// providers, each named by configuration. What would make the job fail at once is
// refused before credits are reserved (core/media/video.ts).
import { checkVideoRequest, estimateVideoSeconds, videoEndpoints, videoRequest } from '../../core/media/video.ts';
import { chainVariable } from '../../core/providers/settings.ts';
import { jobResponses, preferHeader, submitAndAnswer } from '../jobs/answer.ts';
import { problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { siteParams } from '../schemas.ts';

type VideoKey =
  | 'POST /{site_identifier}/media/generatevideo'
  | 'POST /{site_identifier}/media/generatevideo-varianta'
  | 'POST /{site_identifier}/media/generatevideo-variantb';

const videoRoute = (key: VideoKey, endpoint: keyof typeof videoEndpoints) =>
  defineRoute({
    key,
    access: { site: 'write', scope: ['jobs:write', 'media:write'] },
    idempotent: true,
    description:
      `Makes a video (H.264 MP4 with a poster) from a prompt (each sentence a narrated scene) or a script of scenes, as a job, ` +
      `by the providers ${chainVariable(videoEndpoints[endpoint])} names, tried in turn: ` +
      '`local` pictures each scene with the image providers, narrates it with the speech providers and moves over the picture with ffmpeg (progress per scene); ' +
      '`replicate` and `fal` ask their video model (`model`, or the first the operator allows) for a clip of the length it makes nearest above the plan, and their signed webhook delivers it. ' +
      'Credits for the longest the video can be are reserved (402 when not available); its seconds are debited. 503 when no provider is configured. ' +
      'Honours Idempotency-Key and `Prefer: wait=N`.',
    request: { params: siteParams, body: videoRequest, headers: preferHeader },
    responses: { ...jobResponses, 503: problemResponse('No provider of the chain is configured') },
    async handler({ body }, context, { req }) {
      const providers = await checkVideoRequest(context.db, context.services.config, context.site, endpoint, body);
      const seconds = estimateVideoSeconds(body, providers);
      return submitAndAnswer(context, req.get('prefer'), {
        kind: 'video',
        input: { request: body, providers },
        estimatedUnits: seconds,
        plan: { calls: providers, estimate: { second: seconds } },
      });
    },
  });

export const routes = [
  videoRoute('POST /{site_identifier}/media/generatevideo', 'main'),
  videoRoute('POST /{site_identifier}/media/generatevideo-varianta', 'varianta'),
  videoRoute('POST /{site_identifier}/media/generatevideo-variantb', 'variantb'),
];
