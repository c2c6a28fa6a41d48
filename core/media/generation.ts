// Image generation, as submitted: shared by the endpoint and the worker job.
import { z } from 'zod';
import type { CommonQueryMethods } from '../../db/pool.ts';
import type { Submission } from '../jobs/submit.ts';
import { requireSiteFolder } from './access.ts';

export const imageSizes = ['256x256', '512x512', '1024x1024', '1024x768', '768x1024'] as const;

export const imageRequest = z
  .strictObject({
    prompt: z.string().trim().min(1).max(4000),
    size: z.enum(imageSizes).default('1024x1024'),
    style: z.enum(['natural', 'vivid', 'flat']).default('natural'),
    count: z.number().int().min(1).max(4).default(1),
    seed: z
      .number()
      .int()
      .min(0)
      .max(2 ** 31 - 1)
      .optional()
      .describe('The same seed and prompt give the same images (local provider)'),
    format: z.enum(['png', 'webp', 'jpeg']).default('png'),
    folder_id: z.uuid().optional().describe('Where the images go; the top level when absent'),
  })
  .meta({ id: 'ImageGenerationRequest' });

export type ImageRequest = z.output<typeof imageRequest>;

export const dimensions = (size: (typeof imageSizes)[number]) => {
  const [width, height] = size.split('x').map(Number) as [number, number];
  return { width, height };
};

/** The image job for a request on the site: its folder must be the site's (422), and every image asked for is reserved. */
export async function imageSubmission(
  db: CommonQueryMethods,
  siteId: string,
  input: ImageRequest,
): Promise<Submission> {
  if (input.folder_id) await requireSiteFolder(db, siteId, input.folder_id, 'folder_id');
  return { kind: 'image', input, estimatedUnits: input.count };
}
