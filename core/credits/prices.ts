// What operations cost: the active global price of each job kind, overridden
// per site (an override lapses while its kind has no active global price).
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem } from '../errors.ts';

export const units = ['item', 'second', '1k_characters', '1k_tokens', 'page'] as const;

export const priceSchema = z
  .object({
    kind: z.string(),
    unit: z.enum(units),
    price: z.number().describe('Credits per unit'),
    description: z.string(),
    source: z.enum(['global', 'site']).describe('site: this site overrides the global price'),
  })
  .meta({ id: 'Price' });

export type Price = z.infer<typeof priceSchema>;

/** The prices that apply on the site, as a query: of every kind, or of the one given. */
export const effectivePricesQuery = (siteId: string, kind?: string) => sql.fragment`
  select distinct on (kind) kind, unit, price::float8 as price, description,
         case when site_id is null then 'global' else 'site' end as source
  from cost_settings s
  where ((site_id is null and active)
     or (site_id = ${siteId} and exists (select 1 from cost_settings g where g.site_id is null and g.active and g.kind = s.kind)))
    ${kind === undefined ? sql.fragment`` : sql.fragment`and kind = ${kind}`}
  order by kind, site_id nulls last`;

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

/** Sets the site's prices for the kinds given; a null price goes back to the global one. */
export async function setSiteOverrides(
  db: CommonQueryMethods,
  siteId: string,
  overrides: Override[],
): Promise<Price[]> {
  return db.transaction(async (tx) => {
    const known = new Map((await effectivePrices(tx, siteId)).map((entry) => [entry.kind, entry]));
    for (const override of overrides) {
      const current = known.get(override.kind);
      if (!current) {
        throw new Problem(422, `No price is defined for the kind ${override.kind}.`, {
          errors: [{ path: 'body.settings', message: `unknown kind ${override.kind}` }],
        });
      }
      if (override.price === null) {
        await tx.query(
          sql.typeAlias('void')`delete from cost_settings where site_id = ${siteId} and kind = ${override.kind}`,
        );
        continue;
      }
      await tx.query(sql.typeAlias('void')`
        insert into cost_settings (site_id, kind, unit, price, description)
        values (${siteId}, ${override.kind}, ${override.unit ?? current.unit}, ${override.price}, ${current.description})
        on conflict (site_id, kind) where site_id is not null do update set unit = excluded.unit, price = excluded.price`);
    }
    return effectivePrices(tx, siteId);
  });
}

export const quoteSchema = z
  .object({ kind: z.string(), unit: z.enum(units), unit_price: z.number(), units: z.number(), cost: z.number().int() })
  .meta({ id: 'Quote' });

const noPrice = (kind: string) =>
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
