// What operations cost: the active global price of each job kind, overridden
// per site (an override lapses while its kind has no active global price).
// The operator pays the providers, so a site's own price set by a tenant
// admin never goes below the kind's floor (its tenant_minimum, or the global
// price): refused when set, and lifted to the floor when read, should the
// floor rise later. Only a global admin prices a site below it.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { Problem, type ProblemField } from '../errors.ts';

export const units = ['item', 'second', '1k_characters', '1k_tokens', 'page'] as const;

export const priceSchema = z
  .object({
    kind: z.string(),
    unit: z.enum(units),
    price: z.number().describe('Credits per unit: what jobs of this kind are charged on this site'),
    description: z.string(),
    source: z.enum(['global', 'site']).describe('site: this site overrides the global price'),
    tenant_minimum: z
      .number()
      .describe(
        'The lowest price a tenant admin may set for this kind on the site: the floor a global admin set, or the global price',
      ),
  })
  .meta({ id: 'Price' });

export type Price = z.infer<typeof priceSchema>;

/**
 * The prices that apply on the site, as a query: of every kind, or of the one
 * given. A tenant admin's price is read as at least the kind's floor; a
 * global admin's as set.
 */
export const effectivePricesQuery = (siteId: string, kind?: string) => sql.fragment`
  select g.kind, coalesce(s.unit, g.unit) as unit,
         (case when s.id is null then g.price
               when s.set_by_global_admin then s.price
               else greatest(s.price, coalesce(g.tenant_minimum, g.price)) end)::float8 as price,
         coalesce(s.description, g.description) as description,
         case when s.id is null then 'global' else 'site' end as source,
         coalesce(g.tenant_minimum, g.price)::float8 as tenant_minimum
  from cost_settings g
  left join cost_settings s on s.site_id = ${siteId} and s.kind = g.kind
  where g.site_id is null and g.active
    ${kind === undefined ? sql.fragment`` : sql.fragment`and g.kind = ${kind}`}
  order by g.kind`;

const kindPriceSchema = z.object({
  unit: z.enum(units),
  global_price: z.number(),
  floor: z.number().nullable(),
  site: z.object({ unit: z.enum(units), price: z.number(), by_global_admin: z.boolean() }).nullable(),
});

/**
 * A kind's price on the site as its parts, for a job whose providers have
 * prices of their own (core/jobs/pricing.ts): the global price and its
 * explicit floor, and the site's own price as set, with who set it.
 * Undefined when the kind has no active price.
 */
export async function kindPrice(db: CommonQueryMethods, siteId: string, kind: string) {
  const row = await db.maybeOne(sql.type(kindPriceSchema)`
    select g.unit, g.price::float8 as global_price, g.tenant_minimum::float8 as floor,
           case when s.id is null then null
                else json_build_object('unit', s.unit, 'price', s.price::float8, 'by_global_admin', s.set_by_global_admin) end as site
    from cost_settings g
    left join cost_settings s on s.site_id = ${siteId} and s.kind = g.kind
    where g.site_id is null and g.active and g.kind = ${kind}`);
  return row ?? undefined;
}

/** The site's prices: of every kind, or of the one given. */
export async function effectivePrices(db: CommonQueryMethods, siteId: string, kind?: string): Promise<Price[]> {
  return [...(await db.any(sql.type(priceSchema)`${effectivePricesQuery(siteId, kind)}`))];
}

/** The credits `units` cost at `unitPrice`, rounded up to whole credits. */
export const costAt = (unitPrice: number, units: number) => Math.ceil(unitPrice * units - 1e-9);

/** The same, reckoned by a statement from a price it reads (a job's submit). */
export const costIn = (unitPrice: ReturnType<typeof sql.fragment>, units: number) =>
  sql.fragment`ceil(${unitPrice} * ${units} - 1e-9)::bigint`;

export type Override = { kind: string; price: number | null; unit?: (typeof units)[number] | undefined };

/**
 * Why the overrides cannot be made, all at once: an unknown kind, or (unless
 * the caller is a global admin) a price below the kind's floor.
 */
function refusal(overrides: Override[], known: Map<string, Price>, byGlobalAdmin: boolean): Problem | undefined {
  const errors: ProblemField[] = [];
  const floors: string[] = [];
  overrides.forEach((override, index) => {
    const current = known.get(override.kind);
    if (!current) {
      errors.push({ path: `body.settings.${index}.kind`, message: `unknown kind ${override.kind}` });
    } else if (!byGlobalAdmin && override.price !== null && override.price < current.tenant_minimum) {
      const floor = `${current.tenant_minimum} credits per ${current.unit}`;
      errors.push({ path: `body.settings.${index}.price`, message: `below the floor of ${override.kind}: ${floor}` });
      floors.push(`${override.kind} at least ${floor}`);
    }
  });
  if (errors.length === 0) return undefined;
  const detail = floors.length
    ? `A site's own price may not go below its kind's floor (${floors.join('; ')}): only a global admin sets a lower one.`
    : 'No price is defined for a kind given.';
  return new Problem(422, `${detail} Nothing was changed.`, { errors });
}

/**
 * Sets the site's prices for the kinds given; a null price goes back to the
 * global one. All or nothing.
 */
export async function setSiteOverrides(
  db: CommonQueryMethods,
  actor: Actor,
  siteId: string,
  overrides: Override[],
): Promise<Price[]> {
  const byGlobalAdmin = actor.kind === 'user' && actor.isGlobalAdmin;
  return db.transaction(async (tx) => {
    const known = new Map((await effectivePrices(tx, siteId)).map((entry) => [entry.kind, entry]));
    const refused = refusal(overrides, known, byGlobalAdmin);
    if (refused) throw refused;
    for (const override of overrides) {
      const current = known.get(override.kind)!;
      if (override.price === null) {
        await tx.query(
          sql.typeAlias('void')`delete from cost_settings where site_id = ${siteId} and kind = ${override.kind}`,
        );
        continue;
      }
      await tx.query(sql.typeAlias('void')`
        insert into cost_settings (site_id, kind, unit, price, description, set_by_global_admin)
        values (${siteId}, ${override.kind}, ${override.unit ?? current.unit}, ${override.price}, ${current.description},
                ${byGlobalAdmin})
        on conflict (site_id, kind) where site_id is not null
        do update set unit = excluded.unit, price = excluded.price, set_by_global_admin = excluded.set_by_global_admin`);
    }
    return effectivePrices(tx, siteId);
  });
}

export const quoteSchema = z
  .object({ kind: z.string(), unit: z.enum(units), unit_price: z.number(), units: z.number(), cost: z.number().int() })
  .meta({ id: 'Quote' });

export const noPrice = (kind: string) =>
  new Problem(422, `No price is defined for the kind ${kind}.`, {
    errors: [{ path: 'body.kind', message: 'unknown kind' }],
  });

/** The cost of `units` of `kind` on the site, rounded up to whole credits. */
export async function priceOf(
  db: CommonQueryMethods,
  siteId: string,
  kind: string,
  amount: number,
): Promise<z.infer<typeof quoteSchema>> {
  const [found] = await effectivePrices(db, siteId, kind);
  if (!found) throw noPrice(kind);
  return {
    kind,
    unit: found.unit,
    unit_price: found.price,
    units: amount,
    cost: costAt(found.price, amount),
  };
}
