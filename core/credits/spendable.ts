// What the caller can spend now on a site, and from which balance: the one
// answer a client needs before submitting jobs (GET …/credits/available).
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { inTestMode } from '../jobs/test-mode.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { readBalance } from './accounts.ts';
import { fundingOf, fundingSchema, payingBalanceOf, payingBalanceSchema } from './funding.ts';

export const spendableSchema = z
  .object({
    balance: payingBalanceSchema,
    site_id: z.uuid(),
    user_id: z.uuid().nullable().describe('Whose credits on the site (balance `user`); null for the pool'),
    tenant_id: z.uuid(),
    available: z.number().int().describe('What can be spent now: `total` less `reserved`'),
    reserved: z.number().int().describe('Held for jobs that are still running'),
    total: z.number().int().describe('Credits the balance holds, reserved ones included'),
    test_mode: z
      .boolean()
      .describe('true: the caller’s jobs run on the local stand-ins at no charge, and this balance is not touched'),
    description: z.string().describe('What pays for the caller’s jobs here, in a sentence'),
    funding: fundingSchema,
  })
  .meta({ id: 'SpendableCredits' });

export type Spendable = z.infer<typeof spendableSchema>;

const idOnly = z.object({ id: z.string() });

/** The balance that would pay for the caller's jobs on the site, as it is now. */
export async function spendable(db: CommonQueryMethods, { actor, site }: SiteAccess): Promise<Spendable> {
  const balance = payingBalanceOf(actor);
  const userId = actor.kind === 'user' ? actor.userId : null;
  const account = await db.maybeOneFirst(
    userId
      ? sql.type(idOnly)`select id from credit_accounts where site_id = ${site.id} and user_id = ${userId}`
      : sql.type(idOnly)`select id from credit_accounts where tenant_id = ${site.tenant_id} and site_id is null`,
  );
  const held = await readBalance(db, account);
  const testMode = await inTestMode(db, site.tenant_id, actor);
  const description = testMode
    ? 'Test mode: your jobs run on the local stand-ins at no charge; nothing is reserved or debited.'
    : balance === 'user'
      ? 'Your jobs on this site are paid from your own credits here.'
      : 'Your jobs are paid from the tenant’s pool.';
  return {
    balance,
    site_id: site.id,
    user_id: userId,
    tenant_id: site.tenant_id,
    available: held.available,
    reserved: held.reserved,
    total: held.balance,
    test_mode: testMode,
    description,
    funding: fundingOf(balance),
  };
}
