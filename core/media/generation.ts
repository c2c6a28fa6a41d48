// Image generation, as submitted: shared by the endpoint and the worker job.
// The job's plan (which providers, which model) is decided here, at submit,
// where a model not allowed or a size the model cannot make is a 422.
import { z } from 'zod';
import type { CommonQueryMethods } from '../../db/pool.ts';
import type { Config } from '../config.ts';
import { Problem } from '../errors.ts';
import type { Submission } from '../jobs/submit.ts';
import { modelField, planField, planFor, specOf } from '../providers/plan.ts';
import { requireSiteFolder } from './access.ts';

/** A size as `WxH`, in pixels. */
export const sizeText = z
  .string()
  .regex(/^\d{2,5}x\d{2,5}$/, 'width x height in pixels, e.g. 1024x1024')
  .refine((size) => size.split('x').every((side) => Number(side) >= 64 && Number(side) <= 4096), {
    message: 'each side 64 to 4096 pixels',
  });

export const imageRequest = z
  .strictObject({
    prompt: z.string().trim().min(1).max(4000),
    model: modelField('image'),
    size: sizeText
      .default('1024x1024')
      .describe(
        'Width x height. Each model makes its own sizes (gpt-image-2: sides multiples of 16, ratio 1:3 to 3:1; ' +
          'flux: its aspect ratios; the local renderer any): a size the model cannot make is a 422 naming those it can',
      ),
    quality: z
      .enum(['low', 'medium', 'high', 'auto'])
      .optional()
      .describe('For models that take it (GPT image models)'),
    background: z
      .enum(['transparent', 'opaque', 'auto'])
      .optional()
      .describe('For models that take it (GPT image models); transparent needs png or webp'),
    style: z.enum(['natural', 'vivid', 'flat']).default('natural').describe('The local renderer’s palette'),
    count: z.number().int().min(1).max(4).default(1),
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1)
      .optional()
      .describe('The same seed and prompt give the same images (local renderer, and vendors that take a seed)'),
    format: z.enum(['png', 'webp', 'jpeg']).default('png'),
    folder_id: z.uuid().optional().describe('Where the images go; the top level when absent'),
  })
  .meta({ id: 'ImageGenerationRequest' });

export type ImageRequest = z.output<typeof imageRequest>;

/** What the image job is given: the request and its plan. */
export const imageJobInput = imageRequest.safeExtend({ providers: planField });
export type ImageJobInput = z.output<typeof imageJobInput>;

export const dimensions = (size: string) => {
  const [width, height] = size.split('x').map(Number) as [number, number];
  return { width, height };
};

/**
 * The image job for a request on the site: its folder must be the site's
 * (422), its model allowed and able to make the size and count asked (422),
 * and every image asked for is reserved.
 */
export async function imageSubmission(
  db: CommonQueryMethods,
  config: Pick<Config, 'providers'>,
  siteId: string,
  input: ImageRequest,
): Promise<Submission> {
  if (input.folder_id) await requireSiteFolder(db, siteId, input.folder_id, 'folder_id');
  if (input.background === 'transparent' && input.format === 'jpeg')
    throw new Problem(422, 'A transparent background needs png or webp.', {
      errors: [{ path: 'body.format', message: 'png or webp, for a transparent background' }],
    });
  const plan = planFor(config.providers, 'image', {
    model: input.model,
    size: { ...dimensions(input.size), path: 'body.size' },
  });
  const providers = plan.filter((call) => (specOf('image', call)?.maxCount ?? Infinity) >= input.count);
  if (providers.length === 0) {
    const most = specOf('image', plan[0]!)!.maxCount!;
    throw new Problem(422, `${plan[0]!.model} makes at most ${most} images a request.`, {
      errors: [{ path: 'body.count', message: `at most ${most}` }],
    });
  }
  return {
    kind: 'image',
    input: { ...input, providers },
    estimatedUnits: input.count,
    plan: { calls: providers, estimate: { item: input.count } },
  };
}
