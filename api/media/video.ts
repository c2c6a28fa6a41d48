// The three video-generation endpoints: one request shape, three back ends,
// each chosen by configuration. What would make the job fail at once is
// refused before credits are reserved (core/media/video.ts).
import { checkVideoRequest, estimateVideoSeconds, videoEndpoints, videoRequest } from '../../core/media/video.ts';
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
      `Makes a video (H.264 MP4 with a poster) from a prompt (each sentence a narrated scene) or a script of scenes, as a job; the back end is ${videoEndpoints[endpoint]}: ` +
      '`local` pictures each scene with the image provider, narrates it with the speech provider and moves over the picture with ffmpeg (progress per scene); ' +
      '`mediaprovider` hands the work to the media provider, whose signed webhook delivers the file; `openai` asks an OpenAI-compatible /videos API for a 4, 8 or 12 s clip. ' +
      'Credits for the longest the video can be are reserved (402 when not available); its seconds are debited. 503 when the back end is not configured. ' +
      'Honours Idempotency-Key and `Prefer: wait=N`.',
    request: { params: siteParams, body: videoRequest, headers: preferHeader },
    responses: { ...jobResponses, 503: problemResponse('The back end is not configured') },
    async handler({ body }, context, { req }) {
      const backend = await checkVideoRequest(context.db, context.services.config, context.site, endpoint, body);
      return submitAndAnswer(context, req.get('prefer'), {
        kind: 'video',
        input: { request: body, backend },
        estimatedUnits: estimateVideoSeconds(body, backend),
      });
    },
  });

export const routes = [
  videoRoute('POST /{site_identifier}/media/generatevideo', 'main'),
  videoRoute('POST /{site_identifier}/media/generatevideo-varianta', 'varianta'),
  videoRoute('POST /{site_identifier}/media/generatevideo-variantb', 'variantb'),
];
