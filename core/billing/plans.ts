// Subscription plans: what a tenant pays for each month (through a Stripe
// price) and what it gets: monthly credits and a storage quota. Global admins
// keep them; the free plan (seeded by the migration) is what a tenant without
// a live subscription is on. A plan is retired by deactivating it, so
// subscriptions on it keep their history.
import { UniqueIntegrityConstraintViolationError } from 'slonik';
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { Problem, conflict, notFound } from '../errors.ts';
import { timestamp } from '../timestamp.ts';

export const planSchema = z
  .object({
    id: z.uuid(),
    name: z.string(),
    monthly_credits: z.number().int().describe('Granted to the tenant’s pool each period; they expire at its end'),
    price: z.number().int().describe('Per month, in the currency’s minor unit (cents); 0 for the free plan'),
    currency: z.string(),
    stripe_price_id: z.string().nullable().describe('The recurring Stripe price; null for the free plan'),
    storage_quota_bytes: z.number().int().nullable().describe('null: no quota'),
    is_free: z.boolean(),
    active: z.boolean(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'Plan' });

export type Plan = z.infer<typeof planSchema>;

const planFields = {
  name: z.string().trim().min(1).max(200),
  monthly_credits: z.number().int().min(0).max(1_000_000_000),
  price: z.number().int().min(0).max(100_000_000).describe('Minor units, as the Stripe price charges'),
  currency: z
    .string()
    .regex(/^[a-zA-Z]{3}$/, 'an ISO 4217 code such as usd')
    .transform((code) => code.toLowerCase()),
  stripe_price_id: z.string().regex(/^price_[A-Za-z0-9]{1,200}$/, 'a Stripe price id (price_...)'),
  storage_quota_bytes: z.number().int().min(0).nullable(),
  active: z.boolean(),
};

/** A paid plan: it needs its Stripe price. */
export const planInput = z.strictObject({
  ...planFields,
  storage_quota_bytes: planFields.storage_quota_bytes.default(null),
  active: planFields.active.default(true),
});

/** A change; the free plan keeps no Stripe price. */
export const planChange = z.strictObject(planFields).partial();

const columns = sql.fragment`id, name, monthly_credits, price, currency, stripe_price_id, storage_quota_bytes, is_free, active,
  created_at, updated_at`;

/** Statuses in which a subscription's plan applies; otherwise the tenant is on the free plan. */
export const liveStatuses = ['trialing', 'active', 'past_due'] as const;

function priceTaken<T>(promise: Promise<T>): Promise<T> {
  return promise.catch((error) => {
    if (error instanceof UniqueIntegrityConstraintViolationError)
      throw conflict('Another plan already uses this Stripe price.');
    throw error;
  });
}

export async function listPlans(db: CommonQueryMethods, onlyActive: boolean): Promise<Plan[]> {
  const rows = await db.any(sql.type(planSchema)`
    select ${columns} from plans where ${onlyActive ? sql.fragment`active` : sql.fragment`true`}
    order by price, created_at, id`);
  return [...rows];
}

export async function findPlan(db: CommonQueryMethods, id: string): Promise<Plan> {
  const row = await db.maybeOne(sql.type(planSchema)`select ${columns} from plans where id = ${id}`);
  if (!row) throw notFound('No such plan.');
  return row;
}

/** The plan a Stripe price belongs to, if any. */
export function planOfPrice(db: CommonQueryMethods, priceId: string): Promise<Plan | null> {
  return db.maybeOne(sql.type(planSchema)`select ${columns} from plans where stripe_price_id = ${priceId}`);
}

/** The plan in force for a tenant: its subscription's while that is live, the free plan otherwise. */
export async function effectivePlan(db: CommonQueryMethods, tenantId: string): Promise<Plan> {
  return db.one(sql.type(planSchema)`
    select ${columns} from plans
    where id = coalesce(
      (select plan_id from subscriptions
       where tenant_id = ${tenantId} and status = any(${sql.array([...liveStatuses], 'text')})),
      (select id from plans where is_free))`);
}

export async function createPlan(db: CommonQueryMethods, input: z.output<typeof planInput>): Promise<Plan> {
  return priceTaken(
    db.one(sql.type(planSchema)`
      insert into plans (name, monthly_credits, price, currency, stripe_price_id, storage_quota_bytes, active)
      values (${input.name}, ${input.monthly_credits}, ${input.price}, ${input.currency}, ${input.stripe_price_id},
              ${input.storage_quota_bytes}, ${input.active})
      returning ${columns}`),
  );
}

export async function updatePlan(
  db: CommonQueryMethods,
  id: string,
  change: z.output<typeof planChange>,
): Promise<Plan> {
  const current = await findPlan(db, id);
  if (current.is_free && (change.stripe_price_id !== undefined || change.active === false))
    throw new Problem(422, 'The free plan has no Stripe price and stays active.', {
      errors: [
        ...(change.stripe_price_id !== undefined
          ? [{ path: 'body.stripe_price_id', message: 'the free plan has no price' }]
          : []),
        ...(change.active === false ? [{ path: 'body.active', message: 'the free plan stays active' }] : []),
      ],
    });
  const next = { ...current, ...change };
  return priceTaken(
    db.one(sql.type(planSchema)`
      update plans set name = ${next.name}, monthly_credits = ${next.monthly_credits}, price = ${next.price},
        currency = ${next.currency}, stripe_price_id = ${next.stripe_price_id},
        storage_quota_bytes = ${next.storage_quota_bytes}, active = ${next.active}
      where id = ${id} returning ${columns}`),
  );
}
