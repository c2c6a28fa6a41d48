// Image generation, as submitted: shared by the endpoint and the worker job.
import { z } from 'zod';

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
