// Public answers and the public cache (core/content/public-cache.ts): a route
// computes its answer once, then every request for the same URL of the site is
// answered from what was kept, with its ETag (304 for a matching If-None-Match),
// Cache-Control and Surrogate-Key, until a change to what it shows drops it.
import { hash } from 'node:crypto';
import { z } from 'zod';
import type { Request } from 'express';
import type { BareRequest, BareResponse } from '../bare.ts';
import type { Serialized, Tagged } from '../../core/content/public.ts';
import type { CachedAnswer } from '../../core/content/public-cache.ts';
import { withDrafts } from '../../core/content/preview.ts';
import type { Services } from '../../core/services.ts';
import type { Site } from '../../core/tenancy/sites.ts';
import { readAsOf, type RequestDb } from '../../db/cancellable.ts';
import type { CommonQueryMethods } from '../../db/pool.ts';
import { countView, previewing, writeReply } from '../handle.ts';
import { cacheControlHeader, etagHeader } from '../responses.ts';
import type { HeaderSpec, Reply, ResponseSpec, RouteDefinition } from '../route.ts';

const surrogateKeyHeader: HeaderSpec = {
  description:
    'What the answer shows (site:, page:, element:, type:, post:, media: ids), space-separated, for precise CDN purges',
  required: true,
};
const cacheHeaders = {
  ETag: etagHeader,
  'Cache-Control': { ...cacheControlHeader, required: true },
  'Surrogate-Key': surrogateKeyHeader,
};

/** A 200 with the cache headers, and the 304 for a matching If-None-Match. */
export const cached = (description: string, schema: z.ZodType): Record<number, ResponseSpec> => ({
  200: { description, schema, headers: cacheHeaders },
  304: { description: 'Not modified since the ETag in If-None-Match', headers: cacheHeaders },
});

/** The site and the URL as asked: another spelling of the same query is another answer, computed once. */
export const keyOf = (site: Site, req: BareRequest) => `${site.id} ${req.originalUrl}`;

const matches = (ifNoneMatch: string | undefined, etag: string) =>
  ifNoneMatch !== undefined &&
  ifNoneMatch.split(',').some((tag) => tag.trim() === '*' || tag.trim().replace(/^W\//, '') === etag);

/** A kept answer as a reply: the body with its cache headers, or a 304 when the client holds it already. */
function replyOf(services: Pick<Services, 'config'>, answer: CachedAnswer, ifNoneMatch: string | undefined) {
  const { maxAge, staleWhileRevalidate } = services.config.publicCache;
  const headers = {
    ETag: answer.etag,
    'Cache-Control': `public, max-age=${maxAge}, stale-while-revalidate=${staleWhileRevalidate}`,
    'Surrogate-Key': answer.surrogateKey,
  };
  return matches(ifNoneMatch, answer.etag) ? { status: 304, headers } : { status: 200, json: answer.body, headers };
}

/** What a public answer is computed with: the handler's services and site, and the database `compute` reads. */
export type Computing = { services: Pick<Services, 'publicCache' | 'config'>; site: Site; db: RequestDb };

/**
 * The answer kept under the URL, or computed (reading `db`) and kept. An
 * answer computed while a change was announced is not kept, nor one read
 * from a replica that did not yet hold a change announced for what it shows.
 */
export async function keep(
  { services, site, db }: Computing,
  req: BareRequest,
  compute: () => Promise<Tagged<unknown> | Serialized>,
): Promise<CachedAnswer> {
  const cache = services.publicCache;
  const key = keyOf(site, req);
  const kept = await cache.get(key);
  if (kept) return kept;
  const generation = cache.generation;
  const computed = await compute();
  const { tags } = computed;
  const json = Buffer.from('json' in computed ? computed.json : JSON.stringify(computed.body));
  const answer = { body: json, etag: `"${hash('sha1', json, 'base64url')}"`, tags, surrogateKey: tags.join(' ') };
  await cache.set(key, answer, generation, readAsOf(db));
  return answer;
}

type Compute = (db: CommonQueryMethods) => Promise<Tagged<unknown> | Serialized>;

/**
 * Answers from the cache, or computes (reading the database it is given),
 * keeps and answers. A preview (a request with a preview token, ../handle.ts)
 * is computed against the site's drafts (core/content/preview.ts) and never
 * kept, here or by anyone on the way: it is the token holder's alone.
 */
export async function publicAnswer(computing: Computing, req: Request, compute: Compute): Promise<Reply> {
  if (previewing.has(req)) return previewReply(computing, req, compute);
  const answer = await keep(computing, req, () => compute(computing.db));
  return replyOf(computing.services, answer, req.headers['if-none-match']);
}

async function previewReply({ site, db }: Computing, req: Request, compute: Compute): Promise<Reply> {
  const computed = await withDrafts(db, site.id, compute);
  const json = 'json' in computed ? computed.json : JSON.stringify(computed.body);
  const etag = `"${hash('sha1', json, 'base64url')}"`;
  const headers = { ETag: etag, 'Cache-Control': 'private, no-store', 'Surrogate-Key': computed.tags.join(' ') };
  return matches(req.headers['if-none-match'], etag) ? { status: 304, headers } : { status: 200, json, headers };
}

/** The header a front end sends to read drafts (core/content/preview-tokens.ts), for routes that take it. */
export const previewHeaders = z.object({
  'preview-token': z
    .string()
    .max(200)
    .optional()
    .describe(
      'A preview token of the site (POST /{site_identifier}/preview-tokens): the answer shows drafts as if published ' +
        '(a private site too), with the same fallback, depth and shape, and is never cached (`Cache-Control: private, no-store`). ' +
        'An unknown, expired or revoked token, or one of another site, is a 401',
    ),
});

/**
 * For a route whose answers are kept (RouteDefinition.publicCache): serves
 * the kept answer when this process holds it and already knows the site, and
 * says whether it did. A kept answer was computed for this very URL, so its
 * input was valid; what a request needs besides (its id, security headers,
 * rate limit, log line and count) the middleware before the dispatcher gave
 * it. Anything else goes the whole way (publicAnswer above).
 */
export function keptAnswers(
  services: Services,
  route: RouteDefinition,
): ((req: BareRequest, res: BareResponse) => boolean) | undefined {
  if (!route.publicCache) return undefined;
  return (req, res) => {
    // A preview is never answered from the cache (publicAnswer).
    if (req.headers['preview-token'] !== undefined) return false;
    const site = services.accessCache.knownPublicSite(req.params.site_identifier as string);
    const answer = site && services.publicCache.hit(keyOf(site, req));
    if (!answer) return false;
    res.locals.siteId = site.id;
    if (route.views) countView(services, route.views, site.id, req);
    writeReply(req, res, replyOf(services, answer, req.headers['if-none-match']));
    return true;
  };
}
