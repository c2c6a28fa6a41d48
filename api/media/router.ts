// Media endpoints built so far: text to speech (a job) and the asynchronous
// media provider's signed webhook. The library itself comes with the media issue.
import { Problem } from '../../core/errors.ts';
import { estimateSeconds, speechInput } from '../../core/media/speech.ts';
import { deliveryReceipt, receiveDelivery } from '../../core/media/webhook.ts';
import { submitJob } from '../../core/jobs/submit.ts';
import { answerJob, jobResponses } from '../jobs/answer.ts';
import { defineRoute } from '../route.ts';
import { siteParams } from '../schemas.ts';

export const routes = [
  defineRoute({
    key: 'POST /{site_identifier}/media/tts',
    idempotent: true,
    description:
      'Speaks the text into an audio file (mp3, wav or ogg) as a job: 202 with the job and its Location; when it succeeds, `media_id` is the audio’s media item. ' +
      'Credits for the estimated seconds are reserved now (402 when they are not available); the seconds actually made are debited. ' +
      'Honours Idempotency-Key and `Prefer: wait=N` (then 200 if it finished).',
    request: { params: siteParams, body: speechInput },
    responses: jobResponses,
    async handler({ params, body }, context, { req }) {
      const { services, actor } = context;
      const limit = services.config.speech.maxCharacters;
      if (body.text.length > limit) {
        throw new Problem(422, `The text is longer than ${limit} characters.`, { errors: [{ path: 'body.text', message: `at most ${limit} characters` }] });
      }
      const { job } = await submitJob(services.db, services.config, actor, params.site_identifier, {
        kind: 'speech',
        input: body,
        estimatedUnits: estimateSeconds(body),
        scope: 'media:write',
      });
      return answerJob(context, req.get('prefer'), params.site_identifier, job, 'submitted');
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/media/webhook/mediaprovider',
    description:
      'Where the asynchronous media provider delivers a result. Signed with MEDIA_PROVIDER_WEBHOOK_SECRET: `webhook-id`, `webhook-timestamp` (Unix seconds, within 5 minutes) and ' +
      '`webhook-signature: v1,<base64 HMAC-SHA256 of id.timestamp.body>`. The body is a MediaProviderDelivery `{job_ref, status, output?, error?}`; ' +
      'it is read only after the signature checks out. A repeated webhook-id answers 200 and changes nothing.',
    request: { params: siteParams },
    responses: { 200: { description: 'Received', schema: deliveryReceipt } },
    async handler({ params }, { services }, { req }) {
      const headers = { id: req.get('webhook-id'), timestamp: req.get('webhook-timestamp'), signature: req.get('webhook-signature') };
      const raw = Buffer.isBuffer(req.body) ? req.body : undefined;
      return { body: await receiveDelivery(services.db, services.config, params.site_identifier, headers, raw) };
    },
  }),
];
