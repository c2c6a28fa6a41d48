// Which balance pays for a caller's jobs, and how that balance is funded: the
// one statement of it, for the submit (core/jobs/submit.ts), the 402 that says
// which balance was short (./accounts.ts), and GET …/credits/available
// (./spendable.ts). An editor refused while her tenant held thousands was the
// reason: the answer names her own balance and who can fill it, and how.
import { z } from 'zod';
import type { Actor } from '../actor.ts';

/** `user`: the caller's own credits on the site; `tenant`: the tenant's pool. */
export const payingBalances = ['user', 'tenant'] as const;
export type PayingBalance = (typeof payingBalances)[number];

/** Users pay from their credits on the site (whatever their role); service accounts from the tenant's pool. */
export const payingBalanceOf = (actor: Actor): PayingBalance => (actor.kind === 'user' ? 'user' : 'tenant');

export const payingBalanceSchema = z
  .enum(payingBalances)
  .describe('Which balance pays: `user`, the caller’s own credits on the site; `tenant`, the tenant’s pool');

export const fundingSchema = z
  .object({
    description: z.string().describe('How this balance gets credits, in a sentence'),
    grants: z
      .array(
        z.object({
          endpoint: z.string().describe('The request that adds credits to it, e.g. POST /admin/…'),
          who: z.string().describe('Who may make that request'),
        }),
      )
      .describe('Each way credits reach this balance'),
  })
  .meta({
    id: 'CreditFunding',
    description: 'How a balance is funded: who adds credits to it, and with which endpoint',
  });

export type Funding = z.infer<typeof fundingSchema>;

const fundings: Record<PayingBalance, Funding> = {
  user: {
    description:
      'Your own credits on this site pay for your jobs, never the tenant’s pool: a tenant admin moves credits from ' +
      'the pool to you, a global admin grants them, or you buy a credit package.',
    grants: [
      { endpoint: 'POST /{site_identifier}/transactions/credits/allocate-from-tenant', who: 'tenant admins' },
      { endpoint: 'POST /{site_identifier}/transactions/credits/add', who: 'global admins' },
      { endpoint: 'POST /admin/global-cost-settings/user-credits/allocate', who: 'global admins' },
      { endpoint: 'POST /{site_identifier}/payments/create-checkout-session', who: 'you, paying for a credit package' },
    ],
  },
  tenant: {
    description:
      'The tenant’s pool pays for service accounts’ jobs: a global admin grants credits to it, and the tenant’s plan ' +
      'adds its monthly credits.',
    grants: [
      { endpoint: 'POST /admin/global-cost-settings/tenant-credits/allocate', who: 'global admins' },
      { endpoint: 'POST /subscription/upgrade', who: 'tenant admins, for a plan with more monthly credits' },
    ],
  },
};

export const fundingOf = (balance: PayingBalance): Funding => fundings[balance];
