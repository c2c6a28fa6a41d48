// The URL of a media item's file, given with the item and with the jobs that
// made it, so a client fetches the file instead of composing paths. On a
// public site a ready item's URL is the public view's, which needs no token
// and never expires; anywhere else it is a signed URL of our own
// (GET /{site}/media/{id}/signed-view): an HMAC of the site, the item and the
// expiry, so it works with every storage driver (the local folder cannot
// presign) and, under S3 with S3_REDIRECT_SECONDS, still redirects to S3.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { z } from 'zod';
import type { Config } from '../config.ts';
import type { CommonQueryMethods } from '../../db/pool.ts';
import { Problem, notFound } from '../errors.ts';
import { resolveSite } from '../tenancy/site-access.ts';
import type { Site } from '../tenancy/sites.ts';
import { findTenant } from '../tenancy/tenants.ts';
import { timestamp } from '../timestamp.ts';
import { fileOf, viewQuery, type MediaFile } from './files.ts';
import { mediaItemSchema } from './items.ts';
import { findMedia } from './library.ts';

/** How long a signed URL lives at least. */
export const signedUrlSeconds = 3600;

/**
 * Expiries are rounded up to the quarter-hour, so that the same item read
 * again within it gets the same URL and a browser's or a CDN's copy of the
 * file is reused; a URL thus lives between one hour and an hour and a quarter.
 */
const expiryStep = 900;

/** What making URLs needs: where the API is reached, and the signing secret. */
export type FileLinks = { base: string; secret: Buffer; now?: number };

/** The signing key: derived from JWT_SECRET, so that nothing new needs setting and it is never the token key itself. */
export const signingKey = (config: Config): Buffer =>
  createHmac('sha256', config.auth.jwtSecret).update('media-file-urls').digest();

/**
 * Where clients reach the API, for URLs made with no request to read a host
 * from (the worker's webhook payloads and agent runs): PUBLIC_URL, else the
 * port the API listens on at localhost, which is right on this machine only;
 * a deployment whose clients are elsewhere sets PUBLIC_URL.
 */
export const configuredBase = (config: Config): string => config.publicUrl ?? `http://localhost:${config.port}`;

/** The links a process with no request makes: at configuredBase, signed with the process's key. */
export const configuredLinks = (config: Config): FileLinks => ({
  base: configuredBase(config),
  secret: signingKey(config),
});

export const fileUrlFields = {
  url: z
    .string()
    .describe(
      'The file, fetchable without a token: on a public site (a ready item) its public view, which does not expire; ' +
        'otherwise a signed URL valid until url_expires_at (then 403). Add ?variant=, ?width= or ?format= as on the view.',
    ),
  url_expires_at: timestamp
    .nullable()
    .describe('When the signed url stops working; null for a public url, which does not expire'),
};

export const mediaItemResponseSchema = mediaItemSchema.extend(fileUrlFields).meta({ id: 'MediaItem' });

export type FileUrl = { url: string; url_expires_at: string | null };

type UrlSite = Pick<Site, 'id' | 'slug' | 'visibility'>;

const signature = (secret: Buffer, siteId: string, mediaId: string, expires: number) =>
  createHmac('sha256', secret).update(`${siteId}/${mediaId}/${expires}`).digest('base64url');

/** A signed URL of the item's file that works until `expires` (epoch seconds). */
export function signedUrl(links: FileLinks, siteId: string, mediaId: string, expires: number): string {
  const sig = signature(links.secret, siteId, mediaId, expires);
  return `${links.base}/${siteId}/media/${mediaId}/signed-view?expires=${expires}&signature=${sig}`;
}

/** The URL of an item's file: public where the site and the item are, signed otherwise. */
export function fileUrl(links: FileLinks, site: UrlSite, item: { id: string; status?: string }): FileUrl {
  if (site.visibility === 'public' && (item.status ?? 'ready') === 'ready') {
    return { url: `${links.base}/public/${site.slug}/media/${item.id}/view`, url_expires_at: null };
  }
  const now = (links.now ?? Date.now()) / 1000;
  const expires = Math.ceil((now + signedUrlSeconds) / expiryStep) * expiryStep;
  return { url: signedUrl(links, site.id, item.id, expires), url_expires_at: new Date(expires * 1000).toISOString() };
}

export const withFileUrl = <T extends { id: string; status: string }>(links: FileLinks, site: UrlSite, item: T) => ({
  ...item,
  ...fileUrl(links, site, item),
});

/** A job with the URLs of the media it made beside their ids (media_url, media_urls). */
export function withJobFileUrls<T extends { media_id: string | null; media_ids: string[] }>(
  links: FileLinks,
  site: UrlSite,
  job: T,
): T & { media_url: string | null; media_urls: string[]; media_urls_expire_at: string | null } {
  // A job's media are made ready by the job that made them.
  const one = job.media_id ? fileUrl(links, site, { id: job.media_id }) : null;
  const many = job.media_ids.map((id) => fileUrl(links, site, { id }));
  return {
    ...job,
    media_url: one?.url ?? null,
    media_urls: many.map((file) => file.url),
    media_urls_expire_at: (one ?? many[0])?.url_expires_at ?? null,
  };
}

export const signedQuery = z.object({
  expires: z.coerce.number().int().positive().describe('When the URL stops working, in seconds since 1970'),
  signature: z.string().max(100).describe('The URL’s signature, as given'),
});

/** A signed URL's query: its expiry and signature, and the view's own choice of variant or size (not signed: any file of the item). */
export const signedViewQuery = z
  .object({ ...viewQuery.shape, ...signedQuery.shape })
  .refine((query) => !(query.variant && (query.width || query.format)), {
    message: 'give variant, or width and format, not both',
    path: ['variant'],
  });

/**
 * Whether a signed URL is good: its signature is the one we made for this
 * site, item and expiry, and the expiry has not passed. A bad or expired one
 * is a 403 that says which, and nothing of whether the item exists.
 */
export function checkSignedUrl(
  secret: Buffer,
  siteId: string,
  mediaId: string,
  query: z.infer<typeof signedQuery>,
  now = Date.now(),
): void {
  const expected = Buffer.from(signature(secret, siteId, mediaId, query.expires));
  const given = Buffer.from(query.signature);
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) {
    throw forbidden('The URL’s signature does not match: use the url given with the media item, unchanged.');
  }
  if (query.expires * 1000 <= now) {
    throw forbidden('The signed URL has expired: read the media item (or its job) again for a fresh one.');
  }
}

const forbidden = (detail: string) => new Problem(403, detail);

/**
 * The file a signed URL names, for anyone who holds the URL. A site that is
 * not there is the same 403 as a bad signature (a signature for it cannot
 * be good), so the route says nothing of what exists to whoever has none; an
 * item deleted since the URL was made is a 404, as is a tenant no longer
 * active, whose members reach nothing either.
 */
export async function signedMediaFile(
  db: CommonQueryMethods,
  secret: Buffer,
  request: { siteIdentifier: string; mediaId: string; query: z.infer<typeof signedViewQuery> },
): Promise<MediaFile> {
  const { siteIdentifier, mediaId, query } = request;
  const site = await resolveSite(db, siteIdentifier);
  if (!site) throw forbidden('The URL’s signature does not match: use the url given with the media item, unchanged.');
  checkSignedUrl(secret, site.id, mediaId, query);
  const tenant = await findTenant(db, site.tenant_id);
  if (tenant?.status !== 'active') throw notFound('No such media item.');
  const { expires: _e, signature: _s, ...view } = query;
  return fileOf(db, await findMedia(db, site.id, mediaId), view);
}
