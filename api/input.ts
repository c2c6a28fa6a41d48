// A request's input, parsed with the route's schemas: params, query and body
// are all checked before answering, so the client sees every mistake at once.
import type { Request } from 'express';
import type { z } from 'zod';
import { Problem, type ProblemField } from '../core/errors.ts';
import { unstorableFields } from '../core/storable.ts';
import { fromZodError } from './middleware/problems.ts';
import type { RouteDefinition, RouteInput } from './route.ts';
import { siteParams } from './schemas.ts';

export function parseInput(route: RouteDefinition, req: Request): RouteInput<never, never, never> {
  const request = route.request ?? {};
  if (request.body) {
    const types = request.bodyTypes ?? ['application/json'];
    const hasBody = Number(req.get('content-length') ?? 0) > 0 || req.get('transfer-encoding') !== undefined;
    if (hasBody && !req.is(types)) {
      throw new Problem(415, `Send the body as ${types.join(' or ')}.`, {
        headers: { 'Accept-Post': types.join(', ') },
      });
    }
  }
  const errors: ProblemField[] = [];
  const input = {
    params: validate(request.params, req.params, 'params', errors),
    query: validate(request.query, req.query, 'query', errors),
    body: validate(request.body, req.body, 'body', errors),
  };
  // Only what a schema took is used, so only that must be storable: a query parameter
  // an endpoint does not know (?x=%00) is ignored like any other, not refused.
  if (errors.length === 0)
    for (const [location, value] of Object.entries(input))
      if (request[location as keyof typeof input]) unstorableFields(value, location, errors);
  if (errors.length > 0) throw new Problem(422, 'The request is not valid; see errors.', { errors });
  return input as RouteInput<never, never, never>;
}

function validate(schema: z.ZodType | undefined, value: unknown, location: string, errors: ProblemField[]): unknown {
  if (!schema) return value ?? {};
  const result = schema.safeParse(value ?? (location === 'body' ? undefined : {}));
  if (result.success) return result.data;
  errors.push(...(fromZodError(result.error, location).errors ?? []));
  return undefined;
}

/**
 * The `{site_identifier}` of a request, checked as the route's own schema
 * checks it, for admission before the rest of the input is read: a malformed
 * one is a 422 like any other input.
 */
export function siteIdentifier(req: Request): string {
  const errors: ProblemField[] = [];
  const parsed = validate(siteParams, { site_identifier: req.params.site_identifier }, 'params', errors);
  if (errors.length === 0) unstorableFields(parsed, 'params', errors);
  if (errors.length > 0) throw new Problem(422, 'The request is not valid; see errors.', { errors });
  return (parsed as { site_identifier: string }).site_identifier;
}
