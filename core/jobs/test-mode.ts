// Test mode, as Stripe has it: a tenant a global admin put in test mode, or
// a service account made as a test account, has every job run on the local
// stand-ins at no charge. Its requests are checked exactly as live ones are
// (a model or size a live job could not have is still a 422), so an app built
// against test mode works live; but nothing is reserved or debited, no vendor
// is called, and the job and its output say `test`.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import type { Config } from '../config.ts';
import { defaultModel } from '../providers/catalog.ts';
import type { PlannedCall } from '../providers/plan.ts';
import { capabilityOf, chainNames, type ProvidersConfig } from '../providers/settings.ts';

/** Whether a job submitted by `actor` on a site of the tenant runs in test mode. */
export async function inTestMode(db: CommonQueryMethods, tenantId: string, actor: Actor): Promise<boolean> {
  if (actor.kind === 'service' && actor.testMode) return true;
  const found = await db.maybeOneFirst(sql.type(z.object({ test_mode: z.boolean() }))`
    select test_mode from tenants where id = ${tenantId}`);
  return found ?? false;
}

/** A test job's plan: the local stand-in, free. */
export const testPlan: PlannedCall[] = [{ vendor: 'local', model: 'local', unit_price: 0 }];

/**
 * The configuration a test job runs with: every chain the local stand-in
 * alone, and no embeddings (search falls back to its words), so that no
 * vendor is called whatever the job does (a video's scenes, a website's copy).
 */
export function testModeConfig(config: Config): Config {
  const chains = Object.fromEntries(
    chainNames.map((chain) => [chain, chain === 'embeddings' ? [] : ['local']]),
  ) as ProvidersConfig['chains'];
  const local = Object.fromEntries(
    chainNames
      .filter((chain) => chain !== 'embeddings')
      .map((chain) => [capabilityOf(chain), [defaultModel('local', capabilityOf(chain))!]]),
  );
  return {
    ...config,
    providers: { ...config.providers, chains, models: { local }, prices: { local: {} } },
  };
}
