// Sites: the unit content lives in. Addressed by id or by a globally unique
// slug, which therefore may not look like an id nor like a top-level path.
// Deleting a site removes everything it owns (its rows cascade).
import { z } from 'zod';
import { timestamp } from '../timestamp.ts';
import {
  CheckIntegrityConstraintViolationError,
  ForeignKeyIntegrityConstraintViolationError,
  UniqueIntegrityConstraintViolationError,
} from 'slonik';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { Problem, conflict, notFound } from '../errors.ts';
import {
  activeMemberships,
  keyReachesSite,
  reachesSite,
  requireScope,
  requireTenantAdmin,
  tenantRole,
} from '../identity/access.ts';
import { after, countOf, toPage, type PageQuery } from '../pagination.ts';
import { findTenant, slug } from './tenants.ts';

/**
 * Path segments that sit where a site's slug could: the first segment of the
 * API's paths (/admin/..., /health...) and the fixed words beside
 * {site_identifier} under /sites (/sites/by-tenant/...). A site with one of
 * these slugs would be routed elsewhere; the manifest test keeps this list
 * in step with the routes.
 */
export const reservedSlugs: ReadonlySet<string> = new Set([
  'admin',
  'api',
  'auth',
  'by-tenant',
  'docs',
  'health',
  'metrics',
  'openapi.json',
  'payments',
  'problems',
  'public',
  'search',
  'sites',
  'subscription',
  'system-prompts',
  'transferprompts',
  'users',
]);
const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const siteSlug = slug.refine(
  (value) => !reservedSlugs.has(value) && !uuidShape.test(value),
  'is reserved or looks like an id',
);
export const locale = z.string().regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'a BCP 47 tag such as en or pt-BR');

export const siteSchema = z
  .object({
    id: z.uuid(),
    tenant_id: z.uuid(),
    slug: z.string(),
    name: z.string(),
    default_locale: z.string(),
    locales: z.array(z.string()),
    domain: z.string().nullable(),
    settings: z.record(z.string(), z.unknown()),
    visibility: z
      .enum(['private', 'public'])
      .describe('public: the /public endpoints serve its ready media and published content without a token'),
    created_at: timestamp,
  })
  .meta({ id: 'Site' });

export type Site = z.infer<typeof siteSchema>;

export const siteColumns = sql.fragment`sites.id, sites.tenant_id, sites.slug, sites.name, sites.default_locale, sites.locales, sites.domain, sites.settings, sites.visibility, sites.created_at`;

/** Sites the caller can reach, optionally within one tenant. */
function visible(actor: Actor) {
  if (actor.kind === 'service') return sql.fragment`sites.tenant_id = ${actor.tenantId} and ${keyReachesSite(actor)}`;
  if (actor.isGlobalAdmin) return sql.fragment`true`;
  return sql.fragment`${keyReachesSite(actor)} and exists (
    select 1 from ${activeMemberships}
    where m.tenant_id = sites.tenant_id and m.user_id = ${actor.userId} and ${reachesSite(sql.identifier(['sites', 'id']))})`;
}

export async function listSites(db: CommonQueryMethods, actor: Actor, query: PageQuery, tenantId?: string) {
  requireScope(actor, 'sites:read');
  // A global admin has a role in any tenant id, even one that does not exist.
  if (tenantId && (!(await tenantRole(db, actor, tenantId)) || !(await findTenant(db, tenantId))))
    throw notFound('No such tenant.');
  const where = sql.fragment`${visible(actor)} and ${tenantId ? sql.fragment`sites.tenant_id = ${tenantId}` : sql.fragment`true`}`;
  const rows = await db.any(sql.type(siteSchema)`
    select ${siteColumns} from sites where ${where} and ${after(query, 'sites')}
    order by sites.created_at, sites.id limit ${query.limit + 1}`);
  return toPage([...rows], query, () => countOf(db, sql.fragment`select 1 from sites where ${where}`));
}

export type NewSite = {
  tenant_id: string;
  name: string;
  slug: string;
  default_locale?: string | undefined;
  locales?: string[] | undefined;
  domain?: string | null | undefined;
  settings?: Record<string, unknown> | undefined;
  visibility?: 'private' | 'public' | undefined;
};

function rejected(error: unknown): never {
  if (error instanceof UniqueIntegrityConstraintViolationError) throw conflict('That slug or domain is taken.');
  // Only a global admin gets this far with a tenant id that does not exist.
  if (error instanceof ForeignKeyIntegrityConstraintViolationError) throw notFound('No such tenant.');
  if (error instanceof CheckIntegrityConstraintViolationError) {
    throw new Problem(422, 'default_locale must be one of locales.', {
      errors: [{ path: 'body.default_locale', message: 'must be one of locales' }],
    });
  }
  throw error;
}

export async function createSite(db: CommonQueryMethods, actor: Actor, input: NewSite): Promise<Site> {
  await requireTenantAdmin(db, actor, input.tenant_id);
  const defaultLocale = input.default_locale ?? input.locales?.[0] ?? 'en';
  const locales = input.locales ?? [defaultLocale];
  return db
    .one(
      sql.type(siteSchema)`
      insert into sites (tenant_id, name, slug, default_locale, locales, domain, settings, visibility)
      values (${input.tenant_id}, ${input.name}, ${input.slug}, ${defaultLocale}, ${sql.array(locales, 'text')},
              ${input.domain ?? null}, ${sql.jsonb((input.settings ?? {}) as never)}, ${input.visibility ?? 'private'})
      returning ${siteColumns}`,
    )
    .catch(rejected);
}

export type SiteChanges = Partial<Omit<NewSite, 'tenant_id'>>;

/** Tenant admins change a site; the route lets only them in. */
export async function updateSite(db: CommonQueryMethods, current: Site, changes: SiteChanges): Promise<Site> {
  return db
    .one(
      sql.type(siteSchema)`
      update sites set
        name = coalesce(${changes.name ?? null}, name),
        slug = coalesce(${changes.slug ?? null}, slug),
        default_locale = coalesce(${changes.default_locale ?? null}, default_locale),
        locales = coalesce(${changes.locales ? sql.array(changes.locales, 'text') : null}::text[], locales),
        domain = case when ${'domain' in changes}::boolean then ${changes.domain ?? null} else domain end,
        settings = coalesce(${changes.settings ? sql.jsonb(changes.settings as never) : null}::jsonb, settings),
        visibility = coalesce(${changes.visibility ?? null}, visibility)
      where id = ${current.id}
      returning ${siteColumns}`,
    )
    .catch(rejected);
}

export async function deleteSite(db: CommonQueryMethods, current: Site): Promise<void> {
  await db.query(sql.typeAlias('void')`delete from sites where id = ${current.id}`);
}
