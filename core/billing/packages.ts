// Credit packages: what a user can buy through Stripe Checkout. Global admins
// keep them; a package is retired by deactivating it, so payments that named
// it keep their history.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { notFound } from '../errors.ts';
import { timestamp } from '../timestamp.ts';

export const creditPackageSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    credits: z.number().int(),
    price: z.number().int().describe('In the currency’s minor unit (cents)'),
    currency: z.string().describe('ISO 4217, lower case'),
    active: z.boolean(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'CreditPackage' });

export type CreditPackage = z.infer<typeof creditPackageSchema>;

export const creditPackageInput = z.strictObject({
  name: z.string().trim().min(1).max(200),
  credits: z.number().int().min(1).max(1_000_000_000),
  price: z.number().int().min(50).max(100_000_000).describe('Minor units; Stripe’s minimum is about 50 cents'),
  currency: z
    .string()
    .regex(/^[a-zA-Z]{3}$/, 'an ISO 4217 code such as usd')
    .transform((code) => code.toLowerCase()),
  active: z.boolean().default(true),
});

const columns = sql.fragment`id, name, credits, price, currency, active, created_at, updated_at`;

export async function listPackages(db: CommonQueryMethods, onlyActive: boolean): Promise<CreditPackage[]> {
  const rows = await db.any(sql.type(creditPackageSchema)`
    select ${columns} from credit_packages
    where ${onlyActive ? sql.fragment`active` : sql.fragment`true`} order by price, created_at, id`);
  return [...rows];
}

export async function findPackage(db: CommonQueryMethods, id: string): Promise<CreditPackage> {
  const row = await db.maybeOne(sql.type(creditPackageSchema)`select ${columns} from credit_packages where id = ${id}`);
  if (!row) throw notFound('No such credit package.');
  return row;
}

export async function createPackage(db: CommonQueryMethods, input: z.output<typeof creditPackageInput>) {
  return db.one(sql.type(creditPackageSchema)`
    insert into credit_packages (name, credits, price, currency, active)
    values (${input.name}, ${input.credits}, ${input.price}, ${input.currency}, ${input.active}) returning ${columns}`);
}

export async function updatePackage(
  db: CommonQueryMethods,
  id: string,
  change: Partial<z.output<typeof creditPackageInput>>,
): Promise<CreditPackage> {
  const current = await findPackage(db, id);
  const next = { ...current, ...change };
  return db.one(sql.type(creditPackageSchema)`
    update credit_packages set name = ${next.name}, credits = ${next.credits}, price = ${next.price},
      currency = ${next.currency}, active = ${next.active}
    where id = ${id} returning ${columns}`);
}
