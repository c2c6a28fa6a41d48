// Pieces of request schemas that many route groups share.
import { z } from 'zod';
import type { IfMatch } from '../core/content/types.ts';
import { Problem } from '../core/errors.ts';

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

/** If-Match on changes of versioned resources (content types, elements, pages): their `version` as ETag. */
export const ifMatchHeader = z.object({
  'if-match': z
    .string()
    .optional()
    .describe('The version (its ETag, e.g. "3") the change is based on: 412 when someone changed it since'),
});

/**
 * The versions an If-Match names (RFC 9110 §13.1.1: `*`, or a list of entity
 * tags); undefined when absent or `*`. A weak tag (`W/"3"`) is kept out of
 * the list, since it never matches a change: a header of weak tags only
 * leaves none, and the change is refused with a 412. A bare number is taken
 * as the tag it stands for.
 */
export function ifMatchVersion(header: string | undefined): IfMatch | undefined {
  if (header === undefined || header.trim() === '*') return undefined;
  const versions: number[] = [];
  for (const tag of header.split(',')) {
    const match = /^\s*(W\/)?"?(\d{1,9})"?\s*$/.exec(tag);
    if (!match) throw new Problem(400, 'If-Match names a version this resource never had; send its ETag, e.g. "3".');
    if (!match[1]) versions.push(Number(match[2]));
  }
  return versions;
}

/** The ETag of a versioned resource. */
export const versionTag = (version: number) => `"${version}"`;

/**
 * A PATCH body whose fields are all optional must change something: `{}` is
 * a 422 and the document says `minProperties: 1`. A body that refuses `{}`
 * itself keeps its own message; one with a required field is left alone.
 */
export function somethingToChange<B extends z.ZodType>(body: B): B {
  if (body.meta()?.minProperties === 1) return body;
  const empty = body.safeParse({});
  if (!empty.success && empty.error.issues.some((issue) => issue.path.length > 0 || issue.code !== 'custom'))
    return body;
  // The change's schema is its own: it does not take the id (a named component) of the schema it narrows.
  const { id: _id, ...meta } = body.meta() ?? {};
  const checked = empty.success
    ? body.refine((value) => Object.keys(value as object).length > 0, {
        message: 'Send at least one field to change.',
        // A body refused already (an unknown field) is not also told it is empty.
        when: (payload) => payload.issues.length === 0,
      })
    : body;
  return checked.meta({ ...meta, minProperties: 1 });
}
