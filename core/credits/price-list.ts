// The global price list that global admins keep: one price per job kind and
// unit, at most one of them active per kind (the one jobs are charged by),
// each with the floor below which tenant admins may not price their sites
// (tenant_minimum; null: the price itself). Sites override the active price
// (./prices.ts).
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem, conflict, notFound, type ProblemField } from '../errors.ts';
import { after, toPage, type PageQuery } from '../pagination.ts';
import { timestamp } from '../timestamp.ts';
import { effectivePrices, units } from './prices.ts';

export const costSettingSchema = z
  .object({
    id: z.uuid(),
    kind: z.string().describe('The job kind priced (speech, image, ...)'),
    unit: z.enum(units),
    credits_per_unit: z.number(),
    tenant_minimum: z
      .number()
      .nullable()
      .describe(
        'The lowest price tenant admins may set for this kind on their sites; null: credits_per_unit itself. ' +
          'Global admins may price a site lower.',
      ),
    description: z.string(),
    active: z.boolean().describe('The price jobs of this kind are charged by; at most one per kind'),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'GlobalCostSetting' });

export type CostSetting = z.infer<typeof costSettingSchema>;

const creditsPerUnit = z.number().min(0).max(1_000_000).describe('Stored to 4 decimal places');

const tenantMinimum = z
  .number()
  .min(0)
  .max(1_000_000)
  .nullable()
  .describe(
    'The floor for tenant admins’ own prices on their sites, at most credits_per_unit (stored to 4 decimal places); ' +
      'null: credits_per_unit itself, so tenant admins may raise the price but not lower it',
  );

const floorAbovePrice = 'must not be above credits_per_unit';

export const costSettingInput = z
  .strictObject({
    kind: z
      .string()
      .regex(/^[a-z][a-z0-9_]*$/, 'lower case letters, digits and _')
      .max(50),
    unit: z.enum(units),
    credits_per_unit: creditsPerUnit,
    tenant_minimum: tenantMinimum.default(null),
    description: z.string().trim().max(500).default(''),
    active: z.boolean().default(true),
  })
  .refine((input) => input.tenant_minimum === null || input.tenant_minimum <= input.credits_per_unit, {
    path: ['tenant_minimum'],
    message: floorAbovePrice,
  });

/** A change of a price: what is given, the rest stays. */
export const costSettingChanges = z.strictObject({
  unit: z.enum(units).optional(),
  credits_per_unit: creditsPerUnit.optional(),
  tenant_minimum: tenantMinimum.optional(),
  description: z.string().trim().max(500).optional(),
  active: z.boolean().optional(),
});

export type CostSettingInput = z.output<typeof costSettingInput>;

const columns = sql.fragment`id, kind, unit, price::float8 as credits_per_unit, tenant_minimum::float8 as tenant_minimum,
  description, active, created_at, updated_at`;

/** A unique index said no: the same kind and unit, or a second active price of a kind. */
function clash(error: unknown, input: { kind?: string | undefined; unit?: string | undefined }): never {
  if (error instanceof UniqueIntegrityConstraintViolationError) {
    throw error.constraint === 'cost_settings_active_key'
      ? conflict(`The kind ${input.kind ?? ''} has an active price already; deactivate it first.`)
      : conflict(`A price for ${input.kind ?? ''} per ${input.unit ?? ''} exists already.`);
  }
  throw error;
}

export async function listCostSettings(
  db: CommonQueryMethods,
  query: PageQuery & { kind?: string | undefined; active?: boolean | undefined },
) {
  const rows = await db.any(sql.type(costSettingSchema)`
    select ${columns} from cost_settings
    where site_id is null and ${after(query, 'cost_settings')}
      and ${query.kind ? sql.fragment`kind = ${query.kind}` : sql.fragment`true`}
      and ${query.active === undefined ? sql.fragment`true` : sql.fragment`active = ${query.active}`}
    order by created_at, id limit ${query.limit + 1}`);
  return toPage(rows, query);
}

export async function findCostSetting(db: CommonQueryMethods, id: string): Promise<CostSetting> {
  const row = await db.maybeOne(sql.type(costSettingSchema)`
    select ${columns} from cost_settings where id = ${id} and site_id is null`);
  if (!row) throw notFound('No such cost setting.');
  return row;
}

export async function createCostSetting(db: CommonQueryMethods, input: CostSettingInput): Promise<CostSetting> {
  try {
    return await db.one(sql.type(costSettingSchema)`
      insert into cost_settings (kind, unit, price, tenant_minimum, description, active)
      values (${input.kind}, ${input.unit}, ${input.credits_per_unit}, ${input.tenant_minimum}, ${input.description}, ${input.active})
      returning ${columns}`);
  } catch (error) {
    clash(error, input);
  }
}

export type CostSettingChange = z.output<typeof costSettingChanges>;

export async function updateCostSetting(db: CommonQueryMethods, id: string, change: CostSettingChange) {
  const current = await findCostSetting(db, id);
  const price = change.credits_per_unit ?? current.credits_per_unit;
  const floor = change.tenant_minimum === undefined ? current.tenant_minimum : change.tenant_minimum;
  if (floor !== null && floor > price)
    throw new Problem(422, `The floor (${floor}) may not be above the price (${price}).`, {
      errors: [{ path: 'body.tenant_minimum', message: floorAbovePrice }],
    });
  try {
    return await db.one(sql.type(costSettingSchema)`
      update cost_settings set
        unit = ${change.unit ?? current.unit},
        price = ${price},
        tenant_minimum = ${floor},
        description = ${change.description ?? current.description},
        active = ${change.active ?? current.active}
      where id = ${id} returning ${columns}`);
  } catch (error) {
    clash(error, { kind: current.kind, unit: change.unit ?? current.unit });
  }
}

export async function deleteCostSetting(db: CommonQueryMethods, id: string): Promise<void> {
  const deleted = await db.maybeOneFirst(sql.type(z.object({ id: z.string() }))`
    delete from cost_settings where id = ${id} and site_id is null returning id`);
  if (!deleted) throw notFound('No such cost setting.');
}

export type BulkMode = 'upsert' | 'replace';

/** Every problem of a bulk change at once: the same kind and unit twice, or two active prices of a kind in the result. */
function bulkProblems(settings: CostSettingInput[], existing: CostSetting[], mode: BulkMode): ProblemField[] {
  const problems: ProblemField[] = [];
  const seen = new Map<string, number>();
  settings.forEach((setting, index) => {
    const key = `${setting.kind}/${setting.unit}`;
    const first = seen.get(key);
    if (first !== undefined)
      problems.push({ path: `body.settings.${index}`, message: `repeats ${key} of settings.${first}` });
    else seen.set(key, index);
  });
  // The price list after the change: the listed rows, and (upsert) the untouched existing ones.
  const kept = mode === 'replace' ? [] : existing.filter((row) => !seen.has(`${row.kind}/${row.unit}`));
  const active = new Map<string, string[]>();
  for (const [index, setting] of settings.entries())
    if (setting.active && seen.get(`${setting.kind}/${setting.unit}`) === index)
      active.set(setting.kind, [...(active.get(setting.kind) ?? []), `settings.${index}`]);
  for (const row of kept)
    if (row.active) active.set(row.kind, [...(active.get(row.kind) ?? []), `the existing ${row.kind}/${row.unit}`]);
  for (const [kind, where] of active)
    if (where.length > 1) {
      const index = settings.findIndex((setting) => setting.kind === kind && setting.active);
      problems.push({
        path: `body.settings.${index}`,
        message: `${kind} would have ${where.length} active prices: ${where.join(', ')}`,
      });
    }
  return problems;
}

/**
 * Upserts the listed prices by kind and unit (replace: and deletes every
 * global price not listed), all in one transaction or nothing.
 */
export async function bulkCostSettings(db: CommonQueryMethods, settings: CostSettingInput[], mode: BulkMode) {
  return db.transaction(async (tx) => {
    // One bulk change at a time, so the checks below hold when it commits.
    await tx.query(sql.unsafe`lock table cost_settings in share row exclusive mode`);
    const existing = await tx.any(
      sql.type(costSettingSchema)`select ${columns} from cost_settings where site_id is null`,
    );
    const problems = bulkProblems(settings, [...existing], mode);
    if (problems.length > 0)
      throw new Problem(422, `${problems.length} problem(s) in the price list; nothing was changed.`, {
        errors: problems,
      });
    if (mode === 'replace') {
      const keys = settings.map((setting) => `${setting.kind}/${setting.unit}`);
      await tx.query(sql.typeAlias('void')`
        delete from cost_settings where site_id is null and not (kind || '/' || unit = any(${sql.array(keys, 'text')}))`);
    }
    // Deactivations first, so a kind's active price can move to another unit in the same change.
    const ordered = [...settings].sort((a, b) => Number(a.active) - Number(b.active));
    for (const setting of ordered) {
      await tx.query(sql.typeAlias('void')`
        insert into cost_settings (kind, unit, price, tenant_minimum, description, active)
        values (${setting.kind}, ${setting.unit}, ${setting.credits_per_unit}, ${setting.tenant_minimum}, ${setting.description},
                ${setting.active})
        on conflict (kind, unit) where site_id is null
        do update set price = excluded.price, tenant_minimum = excluded.tenant_minimum, description = excluded.description,
                      active = excluded.active`);
    }
    const rows = await tx.any(sql.type(costSettingSchema)`
      select ${columns} from cost_settings where site_id is null order by kind, unit`);
    return { items: [...rows] };
  });
}

/** The active price list (for any signed-in caller). */
export async function activePrices(db: CommonQueryMethods) {
  const rows = await db.any(sql.type(
    costSettingSchema.pick({ kind: true, unit: true, credits_per_unit: true, description: true }),
  )`
    select kind, unit, price::float8 as credits_per_unit, description from cost_settings
    where site_id is null and active order by kind`);
  return [...rows];
}

/** The prices in force: the global ones, or a site's with its overrides merged. */
export async function currentPrices(db: CommonQueryMethods, siteId: string | undefined) {
  if (!siteId) return (await activePrices(db)).map((price) => ({ ...price, source: 'global' as const }));
  const prices = await effectivePrices(db, siteId);
  return prices.map(({ price, tenant_minimum: _floor, ...rest }) => ({ ...rest, credits_per_unit: price }));
}
