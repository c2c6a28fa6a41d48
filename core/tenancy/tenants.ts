// Tenants: administered by global admins (/admin/tenants). Deleting a tenant
// that still has sites is refused (409): sites hold the content, so they are
// deleted one by one, deliberately, first.
import { z } from 'zod';
import { timestamp } from '../timestamp.ts';
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { conflict, notFound } from '../errors.ts';
import { requireGlobalAdmin } from '../identity/access.ts';
import { blockLockedTenant } from '../fraud/block-tenant.ts';
import { after, countOf, toPage, type PageQuery } from '../pagination.ts';

export const slug = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, 'lowercase letters, digits and single hyphens');

export const tenantSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    slug: z.string(),
    status: z.enum(['active', 'suspended', 'blocked']),
    monthly_credit_limit: z.number().int().nullable(),
    test_mode: z
      .boolean()
      .describe('Every job of the tenant runs on the local stand-ins at no charge, marked as a test job'),
    settings: z.record(z.string(), z.unknown()),
    created_at: timestamp,
  })
  .meta({ id: 'Tenant' });

export type Tenant = z.infer<typeof tenantSchema>;

const columns = sql.fragment`tenants.id, tenants.name, tenants.slug, tenants.status, tenants.monthly_credit_limit, tenants.test_mode, tenants.settings, tenants.created_at`;

/** A name turned into a slug: "Acme Corp." → "acme-corp"; `fallback` when nothing is left of it. */
export function slugify(name: string, fallback = 'tenant', maxLength = 50): string {
  const base = name
    .normalize('NFKD')
    // NFKD splits "Á" into "A" and a combining accent; drop the accent, not the letter after it.
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, maxLength)
    .replace(/-+$/, '');
  return base || fallback;
}

function taken<T>(promise: Promise<T>, what: string): Promise<T> {
  return promise.catch((error) => {
    if (error instanceof UniqueIntegrityConstraintViolationError) throw conflict(`${what} is taken.`);
    throw error;
  });
}

export async function findTenant(db: CommonQueryMethods, id: string): Promise<Tenant | null> {
  return db.maybeOne(sql.type(tenantSchema)`select ${columns} from tenants where id = ${id}`);
}

export async function getTenant(db: CommonQueryMethods, actor: Actor, id: string): Promise<Tenant> {
  requireGlobalAdmin(actor);
  const found = await findTenant(db, id);
  if (!found) throw notFound('No such tenant.');
  return found;
}

export async function listTenants(db: CommonQueryMethods, actor: Actor, query: PageQuery) {
  requireGlobalAdmin(actor);
  const rows = await db.any(sql.type(tenantSchema)`
    select ${columns} from tenants where ${after(query, 'tenants')} order by tenants.created_at, tenants.id limit ${query.limit + 1}`);
  return toPage([...rows], query, () => countOf(db, sql.fragment`select 1 from tenants`));
}

export type NewTenant = {
  name: string;
  slug?: string | undefined;
  monthly_credit_limit?: number | null | undefined;
  test_mode?: boolean | undefined;
  settings?: Record<string, unknown> | undefined;
};

/** As many characters as a tenant's name may have (the column's check). */
const nameMax = 200;

/**
 * The tenant a sign-up gets: "<full name>'s workspace", the full name cut so
 * that it fits (a full name of 189 to 200 characters made a name too long, a 500).
 */
export function workspaceName(fullName: string): string {
  const suffix = "'s workspace";
  // Counted in characters, as PostgreSQL's length() counts them.
  return `${Array.from(fullName)
    .slice(0, nameMax - suffix.length)
    .join('')}${suffix}`;
}

/** Inserts a tenant; without a slug one is derived from the name and made unique. */
export async function insertTenant(db: CommonQueryMethods, input: NewTenant): Promise<Tenant> {
  const wanted = input.slug ?? slugify(input.name);
  const free = input.slug
    ? wanted
    : await db.oneFirst(sql.type(z.object({ slug: z.string() }))`
        select candidate as slug from (
          select ${wanted} as candidate, 0 as n
          union all select ${wanted} || '-' || n, n from generate_series(2, 1000) n
        ) c where not exists (select 1 from tenants where slug = c.candidate) order by n limit 1`);
  return taken(
    db.one(sql.type(tenantSchema)`
      insert into tenants (name, slug, monthly_credit_limit, test_mode, settings)
      values (${input.name}, ${free}, ${input.monthly_credit_limit ?? null}, ${input.test_mode ?? false},
              ${sql.jsonb((input.settings ?? {}) as never)})
      returning ${columns}`),
    `The slug ${free}`,
  );
}

export async function createTenant(db: CommonQueryMethods, actor: Actor, input: NewTenant): Promise<Tenant> {
  requireGlobalAdmin(actor);
  return insertTenant(db, input);
}

export type TenantChanges = Partial<{
  name: string;
  slug: string;
  status: Tenant['status'];
  monthly_credit_limit: number | null;
  test_mode: boolean;
  settings: Record<string, unknown>;
}>;

/** Why a tenant blocked by its PATCH is, where POST /admin/fraud/block-tenant records the admin's words. */
const patchedBlockReason = 'Blocked by a global administrator (PATCH /admin/tenants/{tenant_id})';

/**
 * Changes the fields given. A change to `blocked` blocks the tenant as the
 * fraud endpoint does (core/fraud/block-tenant.ts: service accounts disabled,
 * unfinished jobs canceled with their credits released), in the same
 * transaction: otherwise its queued jobs would still run and be paid for.
 */
export async function updateTenant(
  db: CommonQueryMethods,
  actor: Actor,
  id: string,
  changes: TenantChanges,
): Promise<Tenant> {
  const admin = requireGlobalAdmin(actor);
  return db.transaction(async (tx) => {
    const current = await tx.maybeOne(sql.type(z.object({ status: z.string() }))`
      select status from tenants where id = ${id} for no key update`);
    if (!current) throw notFound('No such tenant.');
    if (changes.status === 'blocked' && current.status !== 'blocked')
      await blockLockedTenant(tx, admin, id, patchedBlockReason);
    return taken(
      tx.one(sql.type(tenantSchema)`
        update tenants set
          name = coalesce(${changes.name ?? null}, name),
          slug = coalesce(${changes.slug ?? null}, slug),
          status = coalesce(${changes.status ?? null}, status),
          monthly_credit_limit = case when ${'monthly_credit_limit' in changes}::boolean then ${changes.monthly_credit_limit ?? null}::bigint else monthly_credit_limit end,
          test_mode = coalesce(${changes.test_mode ?? null}::boolean, test_mode),
          settings = coalesce(${changes.settings ? sql.jsonb(changes.settings as never) : null}::jsonb, settings)
        where id = ${id}
        returning ${columns}`),
      'That slug',
    );
  });
}

export async function deleteTenant(db: CommonQueryMethods, actor: Actor, id: string): Promise<void> {
  requireGlobalAdmin(actor);
  await db.transaction(async (tx) => {
    const found = await tx.maybeOne(sql.type(z.object({ sites: z.number() }))`
      select (select count(*)::int from sites where tenant_id = t.id) as sites from tenants t where t.id = ${id} for update`);
    if (!found) throw notFound('No such tenant.');
    if (found.sites > 0) throw conflict(`The tenant still has ${found.sites} site(s); delete them first.`);
    await tx.query(sql.typeAlias('void')`delete from tenants where id = ${id}`);
  });
}

/** A copied site's slug: the new tenant's slug as a prefix, cut to 63 characters without a trailing hyphen. */
const copiedSlug = (prefix: string, slug: ReturnType<typeof sql.identifier>) =>
  sql.fragment`rtrim(left(${prefix} || '-' || ${slug}, 63), '-')`;

/** A source site and its copy in a clone. */
export type CopiedSite = { from: string; to: string };

/**
 * A copy of a tenant: its settings, its sites (with new slugs, the same
 * visibility) and who may use them (memberships and site assignments). Users
 * are shared, not copied; service accounts are not copied, since their
 * secrets must not be. The sites' content is copied after, by a job
 * (core/cloning/tenant-clone.ts); the sites copied are answered for it.
 */
export async function cloneTenant(
  db: CommonQueryMethods,
  actor: Actor,
  id: string,
  input: NewTenant,
): Promise<{ tenant: Tenant; sites: CopiedSite[] }> {
  requireGlobalAdmin(actor);
  return db.transaction(async (tx) => {
    const source = await findTenant(tx, id);
    if (!source) throw notFound('No such tenant.');
    const copy = await insertTenant(tx, {
      name: input.name,
      slug: input.slug,
      monthly_credit_limit: source.monthly_credit_limit,
      test_mode: source.test_mode,
      settings: source.settings,
    });
    await tx.query(sql.typeAlias('void')`
      insert into memberships (tenant_id, user_id, role) select ${copy.id}, user_id, role from memberships where tenant_id = ${id}`);
    const sites = await taken(
      tx.any(sql.type(z.object({ from: z.uuid(), to: z.uuid() }))`
        with copied as (
          insert into sites (tenant_id, slug, name, default_locale, locales, settings, visibility)
          select ${copy.id}, ${copiedSlug(copy.slug, sql.identifier(['sites', 'slug']))}, name, default_locale, locales, settings,
                 visibility
          from sites where tenant_id = ${id}
          returning id, slug
        ), pairs as (
          select c.id as new_id, s.id as old_id, s.created_at from copied c
          join sites s on s.tenant_id = ${id} and ${copiedSlug(copy.slug, sql.identifier(['s', 'slug']))} = c.slug
        ), assigned as (
          insert into site_users (tenant_id, site_id, user_id)
          select ${copy.id}, p.new_id, su.user_id from pairs p join site_users su on su.site_id = p.old_id
        )
        select old_id as "from", new_id as "to" from pairs order by created_at, old_id`),
      'A copied site slug',
    );
    return { tenant: copy, sites: [...sites] };
  });
}
