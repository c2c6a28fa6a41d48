// Pieces of request schemas that many route groups share.
import { z } from 'zod';

export const uuidParams = <K extends string>(...names: K[]) =>
  z.object(Object.fromEntries(names.map((name) => [name, z.uuid()])) as Record<K, z.ZodUUID>);

export const siteParams = z.object({ site_identifier: z.string().min(1).max(100).describe('The site’s id or slug') });

export const created = (description: string, schema: z.ZodType) => ({ 201: { description, schema } });

export const noContent = (description: string) => ({ 204: { description } });

/** A query flag: true or false, false when absent. */
export const flag = z
  .enum(['true', 'false'])
  .default('false')
  .transform((value) => value === 'true');
