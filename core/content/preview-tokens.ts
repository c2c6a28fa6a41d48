// Preview tokens: what a site's front end sends as `Preview-Token` to the
// public delivery endpoints to read drafts there (./preview.ts), in the shape
// and with the fallback it reads published content in. Editors make them for
// one site and a short while (at most a week); deleting one revokes it at
// once, since every preview request looks its token up.
//
// Format: `cpv_` and 40 characters of base64url (240 random bits), so secret
// scanners can find a leaked one by pattern (`cpv_[A-Za-z0-9_-]{40}`). Shown
// once, at creation; only its SHA-256 is stored (db/migrations/0059).
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorUserId } from '../actor.ts';
import { Problem, notFound } from '../errors.ts';
import { digest } from '../identity/secrets.ts';
import { after, countOf, toPage, type PageQuery } from '../pagination.ts';
import { identifies, type SiteAccess } from '../tenancy/site-access.ts';
import { siteColumns, siteSchema, type Site } from '../tenancy/sites.ts';
import { timestamp } from '../timestamp.ts';

/** A week: a preview link shared for review lives about as long as the review. */
export const longestPreviewSeconds = 7 * 24 * 3600;

export const previewTokenSchema = z
  .object({
    id: z.uuid(),
    site_id: z.uuid(),
    name: z.string(),
    hint: z.string().describe('`cpv_…` and the token’s last four characters, to tell tokens apart'),
    created_by: z.uuid().nullable(),
    created_at: timestamp,
    expires_at: timestamp,
  })
  .meta({ id: 'PreviewToken' });

export const previewTokenWithSecretSchema = previewTokenSchema
  .extend({
    token: z.string().describe('The token, shown only now: send it as the `Preview-Token` header of public reads'),
  })
  .meta({ id: 'PreviewTokenWithSecret' });

const columns = sql.fragment`t.id, t.site_id, t.name, 'cpv_…' || t.last_four as hint, t.created_by, t.created_at, t.expires_at`;

export type NewPreviewToken = { name: string; expires_in_seconds: number };

export async function createPreviewToken(db: CommonQueryMethods, { site, actor }: SiteAccess, input: NewPreviewToken) {
  const token = `cpv_${randomBytes(30).toString('base64url')}`;
  const created = await db.one(sql.type(previewTokenSchema)`
    insert into preview_tokens as t (tenant_id, site_id, name, last_four, secret_hash, created_by, expires_at)
    values (${site.tenant_id}, ${site.id}, ${input.name}, ${token.slice(-4)}, ${sql.binary(digest(token))},
            ${actorUserId(actor)}, now() + ${input.expires_in_seconds} * interval '1 second')
    returning ${columns}`);
  return { ...created, token };
}

/** The site's tokens that still work, newest last. */
export async function listPreviewTokens(db: CommonQueryMethods, { site }: SiteAccess, query: PageQuery) {
  const where = sql.fragment`t.site_id = ${site.id} and t.expires_at > now()`;
  const rows = await db.any(sql.type(previewTokenSchema)`
    select ${columns} from preview_tokens t where ${where} and ${after(query, 't')}
    order by t.created_at, t.id limit ${query.limit + 1}`);
  return toPage([...rows], query, () => countOf(db, sql.fragment`select 1 from preview_tokens t where ${where}`));
}

export async function revokePreviewToken(db: CommonQueryMethods, { site }: SiteAccess, id: string): Promise<void> {
  const gone = await db.maybeOne(sql.type(z.object({ id: z.uuid() }))`
    delete from preview_tokens where id = ${id} and site_id = ${site.id} returning id`);
  if (!gone) throw notFound('No such preview token.');
}

/** The answer to a Preview-Token that does not open this site: unknown, expired, revoked or another site's. */
export const previewRefused = () =>
  new Problem(401, 'The Preview-Token is unknown, expired or revoked, or is not for this site.');

/**
 * The site a preview token opens: the one `identifier` names, if the token is
 * live and for it, and its tenant in good standing. A site need not be public
 * to be previewed (a site being built is previewed before it opens).
 */
export async function previewSite(db: CommonQueryMethods, token: string, identifier: string): Promise<Site> {
  const site = await db.maybeOne(sql.type(siteSchema)`
    select ${siteColumns} from preview_tokens p
    join sites on sites.id = p.site_id
    join tenants t on t.id = sites.tenant_id and t.status = 'active'
    where p.secret_hash = ${sql.binary(digest(token))} and p.expires_at > now() and ${identifies(identifier)}`);
  if (!site) throw previewRefused();
  return site;
}
