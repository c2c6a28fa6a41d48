// What a tenant stores, against its plan's storage quota. A media item holds
// three kinds of bytes: its original (the current file), its variants (the
// responsive sizes and posters processing made, sized inside the item's
// `variants` JSON) and its earlier versions (media_versions). All three count.
//
// The quota is checked where new bytes enter the library through the API:
// uploads and saved edits (a new version keeps the old one). What jobs make
// afterwards is not blocked: the variants processing makes of an accepted
// file, and the media a paid job delivers (speech, images, video, AI edits),
// which the credits already cover. So a tenant can end a little over its
// quota; its next upload is then refused.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem, problemType } from '../errors.ts';
import { mediaKinds } from '../media/items.ts';
import { effectivePlan } from './plans.ts';

// Sums of bigint are numeric in PostgreSQL: each is cast back to int8, which
// the pool parses to a number and refuses loudly past 2^53 bytes (8 PiB).
const bytes = z.number().int().min(0);

const partsShape = {
  originals_bytes: bytes.describe('The current file of each item'),
  variants_bytes: bytes.describe('Responsive sizes and posters made by processing'),
  versions_bytes: bytes.describe('Files that saved edits replaced, kept as versions'),
};

export const storageUsageSchema = z
  .object({
    tenant_id: z.uuid(),
    plan: z.object({ id: z.uuid(), name: z.string() }).describe('The plan in force'),
    quota_bytes: bytes.nullable().describe('The plan’s storage quota; null: no quota'),
    used_bytes: bytes,
    available_bytes: bytes.nullable().describe('What is left of the quota (0 when over it); null: no quota'),
    percent_used: z
      .number()
      .min(0)
      .max(100)
      .nullable()
      .describe('Share of the quota in use, 0–100 to two decimals (100 at or over it); null: no quota'),
    sites: z.array(
      z.object({
        site_id: z.uuid(),
        slug: z.string(),
        name: z.string(),
        used_bytes: bytes,
        ...partsShape,
        kinds: z
          .array(z.object({ kind: z.enum(mediaKinds), items: z.number().int(), ...partsShape }))
          .describe('Only the kinds the site holds'),
      }),
    ),
  })
  .meta({ id: 'StorageUsage' });

export type StorageUsage = z.infer<typeof storageUsageSchema>;

/** The bytes of one media item's variants, over `media_items` in the enclosing query. */
const variantBytes = sql.fragment`coalesce((select sum((v->>'size_bytes')::int8) from jsonb_array_elements(media_items.variants) v), 0)`;

/** The bytes of one media item's earlier versions (found through the media_id index). */
const versionBytes = sql.fragment`coalesce((select sum(mv.size_bytes) from media_versions mv where mv.media_id = media_items.id), 0)`;

const usageRow = z.object({
  site_id: z.uuid(),
  slug: z.string(),
  name: z.string(),
  kind: z.enum(mediaKinds).nullable(),
  items: z.number().int(),
  ...partsShape,
});

/** What the tenant stores per site and per kind, and how that stands against its plan's quota. */
export async function storageUsage(db: CommonQueryMethods, tenantId: string): Promise<StorageUsage> {
  const plan = await effectivePlan(db, tenantId);
  // One row per site and kind it holds; a site with no media has one row with a null kind.
  const rows = await db.any(sql.type(usageRow)`
    select sites.id as site_id, sites.slug, sites.name, k.kind, coalesce(k.items, 0)::int8 as items,
           coalesce(k.originals, 0)::int8 as originals_bytes, coalesce(k.variants, 0)::int8 as variants_bytes,
           coalesce(k.versions, 0)::int8 as versions_bytes
    from sites
    left join lateral (
      select media_items.kind, count(*) as items, sum(media_items.size_bytes) as originals,
             sum(${variantBytes}) as variants, sum(${versionBytes}) as versions
      from media_items where media_items.site_id = sites.id
      group by media_items.kind
    ) k on true
    where sites.tenant_id = ${tenantId}
    order by sites.created_at, sites.id, k.kind`);
  const sites = new Map<string, StorageUsage['sites'][number]>();
  for (const row of rows) {
    let site = sites.get(row.site_id);
    if (!site) {
      site = {
        site_id: row.site_id,
        slug: row.slug,
        name: row.name,
        used_bytes: 0,
        originals_bytes: 0,
        variants_bytes: 0,
        versions_bytes: 0,
        kinds: [],
      };
      sites.set(row.site_id, site);
    }
    if (!row.kind) continue;
    const { kind, items, originals_bytes, variants_bytes, versions_bytes } = row;
    site.kinds.push({ kind, items, originals_bytes, variants_bytes, versions_bytes });
    site.originals_bytes += originals_bytes;
    site.variants_bytes += variants_bytes;
    site.versions_bytes += versions_bytes;
    site.used_bytes += originals_bytes + variants_bytes + versions_bytes;
  }
  const used = [...sites.values()].reduce((total, site) => total + site.used_bytes, 0);
  const quota = plan.storage_quota_bytes;
  return {
    tenant_id: tenantId,
    plan: { id: plan.id, name: plan.name },
    quota_bytes: quota,
    used_bytes: used,
    available_bytes: quota === null ? null : Math.max(0, quota - used),
    percent_used: quota === null ? null : percentOf(used, quota),
    sites: [...sites.values()],
  };
}

function percentOf(used: number, quota: number): number {
  if (used >= quota) return used === 0 ? 0 : 100;
  return Math.min(100, Math.round((used / quota) * 10_000) / 100);
}

/** Everything the tenant stores, in bytes: one sum, without the breakdown. */
export async function usedBytes(db: CommonQueryMethods, tenantId: string): Promise<number> {
  return db.oneFirst(sql.type(z.object({ used_bytes: bytes }))`
    select coalesce(sum(media_items.size_bytes + ${variantBytes} + ${versionBytes}), 0)::int8 as used_bytes
    from sites join media_items on media_items.site_id = sites.id
    where sites.tenant_id = ${tenantId}`);
}

/**
 * Refuses (413 /problems/storage-quota-exceeded) bytes that would take the
 * tenant past its plan's quota; a plan without one takes anything. With
 * `lock`, inside the transaction that records the bytes, the tenant's
 * writers are checked one at a time until it commits, so two uploads that
 * each fit but not together cannot both pass.
 */
export async function checkStorageQuota(
  db: CommonQueryMethods,
  tenantId: string,
  incomingBytes: number,
  options: { lock?: boolean } = {},
): Promise<void> {
  const quota = (await effectivePlan(db, tenantId)).storage_quota_bytes;
  if (quota === null) return;
  // Its own statement: the sum below must see what the previous holder committed.
  if (options.lock)
    await db.query(sql.typeAlias('void')`select from pg_advisory_xact_lock(hashtext('storage:' || ${tenantId}))`);
  const used = await usedBytes(db, tenantId);
  if (used + incomingBytes <= quota) return;
  throw new Problem(
    413,
    incomingBytes === 0
      ? `The tenant stores ${used} bytes, more than its storage quota of ${quota} bytes.`
      : `${incomingBytes} more bytes would exceed the tenant’s storage quota of ${quota} bytes (${used} stored).`,
    {
      type: problemType('storage-quota-exceeded'),
      title: 'Storage quota exceeded',
      extensions: { quota_bytes: quota, used_bytes: used, incoming_bytes: incomingBytes },
    },
  );
}
