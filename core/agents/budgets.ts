// Monthly budgets of agent runs (db 0049): what all of a tenant's runs, and
// each agent's runs in the tenant, may cost in a calendar month (UTC), in
// credits. Global admins and the tenant's admins set them and read what the
// month has used. A run's start is refused (402) once a budget is spent, and
// is otherwise held to what is left: that is the most it reserves, and it
// stops when its steps have cost that much (worker/agents/loop.ts), saying
// which budget stopped it.
//
// What a month has used is read from the jobs themselves, so nothing can
// drift: what finished runs were charged, and what unfinished ones hold
// reserved (they may yet spend it).
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import { Problem, notFound, problemType } from '../errors.ts';
import { requireTenantAdmin } from '../identity/access.ts';
import { timestamp } from '../timestamp.ts';

export const budgetChange = z
  .strictObject({
    monthly_budget: z
      .number()
      .int()
      .min(0)
      .max(1_000_000_000_000)
      .nullable()
      .describe('Credits a calendar month (UTC) may use; null lifts the budget'),
  })
  .meta({ id: 'AgentBudgetChange' });

const usage = {
  monthly_budget: z.number().int().nullable().describe('Credits a month may use; null: no budget'),
  used: z.number().int().describe('What this month’s runs were charged, and what unfinished ones hold reserved'),
  remaining: z.number().int().nullable().describe('What is left this month; null: no budget'),
};

export const agentBudgetsSchema = z
  .object({
    tenant_id: z.uuid(),
    month_start: timestamp,
    resets_at: timestamp.describe('When the month’s use starts again from 0'),
    tenant: z.object(usage).describe('All agent runs of the tenant'),
    agents: z
      .array(z.object({ agent_id: z.uuid(), name: z.string(), ...usage }))
      .describe('Each agent assigned to the tenant: its runs in this tenant'),
  })
  .meta({ id: 'AgentBudgets' });

export type AgentBudgets = z.infer<typeof agentBudgetsSchema>;

const month = sql.fragment`date_trunc('month', now() at time zone 'utc') at time zone 'utc'`;

/** The month's agent runs of the tenant: the agent each ran, and the credits it used or holds. */
const monthRuns = (tenantId: string) => sql.fragment`
  select (j.input->>'agent_id')::uuid as agent_id,
         case when j.status in ('queued', 'running', 'waiting') then j.credits_reserved else j.credits_charged end as used
  from jobs j
  where j.tenant_id = ${tenantId} and j.kind = 'agent_run' and j.created_at >= ${month}`;

const left = (budget: number | null, used: number) => (budget === null ? null : Math.max(0, budget - used));

async function readBudgets(db: CommonQueryMethods, tenantId: string): Promise<AgentBudgets> {
  const tenant = await db.maybeOne(sql.type(
    z.object({ month_start: timestamp, resets_at: timestamp, monthly_budget: z.number().nullable(), used: z.number() }),
  )`
    with runs as (${monthRuns(tenantId)})
    select ${month} as month_start, ${month} + interval '1 month' as resets_at,
           t.agent_monthly_budget as monthly_budget, (select coalesce(sum(used), 0) from runs)::int8 as used
    from tenants t where t.id = ${tenantId}`);
  if (!tenant) throw notFound('No such tenant.');
  const agents = await db.any(sql.type(
    z.object({ agent_id: z.uuid(), name: z.string(), monthly_budget: z.number().nullable(), used: z.number() }),
  )`
    with runs as (${monthRuns(tenantId)})
    select at.agent_id, a.name, at.monthly_budget,
           coalesce((select sum(used) from runs where runs.agent_id = at.agent_id), 0)::int8 as used
    from agent_tenants at join agents a on a.id = at.agent_id
    where at.tenant_id = ${tenantId}
    order by a.name, a.id`);
  return {
    tenant_id: tenantId,
    month_start: tenant.month_start,
    resets_at: tenant.resets_at,
    tenant: {
      monthly_budget: tenant.monthly_budget,
      used: tenant.used,
      remaining: left(tenant.monthly_budget, tenant.used),
    },
    agents: agents.map((agent) => ({ ...agent, remaining: left(agent.monthly_budget, agent.used) })),
  };
}

/** The tenant's budgets and this month's use: for global admins and the tenant's admins. */
export async function agentBudgets(db: CommonQueryMethods, actor: Actor, tenantId: string) {
  await requireTenantAdmin(db, actor, tenantId);
  return readBudgets(db, tenantId);
}

/** Sets (or, with null, lifts) the budget of all the tenant's agent runs. */
export async function setTenantAgentBudget(
  db: CommonQueryMethods,
  actor: Actor,
  tenantId: string,
  budget: number | null,
) {
  await requireTenantAdmin(db, actor, tenantId);
  await db.query(sql.typeAlias('void')`update tenants set agent_monthly_budget = ${budget} where id = ${tenantId}`);
  return readBudgets(db, tenantId);
}

/** Sets (or lifts) the budget of one agent's runs in the tenant; 404 when the agent is not assigned to it. */
export async function setAgentBudget(
  db: CommonQueryMethods,
  actor: Actor,
  tenantId: string,
  agentId: string,
  budget: number | null,
) {
  await requireTenantAdmin(db, actor, tenantId);
  const updated = await db.maybeOne(sql.type(z.object({ agent_id: z.uuid() }))`
    update agent_tenants set monthly_budget = ${budget}
    where tenant_id = ${tenantId} and agent_id = ${agentId} returning agent_id`);
  if (!updated) throw notFound('The agent is not assigned to that tenant.');
  return readBudgets(db, tenantId);
}

export type CreditLimit = { credits: number; by: 'agent_budget' | 'tenant_budget' };

/**
 * What is left of the budgets a new run of the agent falls under, the
 * smaller of the two, or null when neither is set; 402 when one is spent.
 * Taken under a lock of the tenant's run starts, held to the end of the
 * caller's transaction, so two runs cannot both be handed the same credits.
 */
export async function budgetLeft(
  tx: CommonQueryMethods,
  tenantId: string,
  agentId: string,
): Promise<CreditLimit | null> {
  const set = await tx.maybeOne(sql.type(z.object({ tenant: z.number().nullable(), agent: z.number().nullable() }))`
    select t.agent_monthly_budget as tenant, at.monthly_budget as agent
    from tenants t left join agent_tenants at on at.tenant_id = t.id and at.agent_id = ${agentId}
    where t.id = ${tenantId}`);
  if (!set || (set.tenant === null && set.agent === null)) return null;
  await tx.query(sql.unsafe`select pg_advisory_xact_lock(hashtext('agent-budget:' || ${tenantId}))`);
  const budgets = await readBudgets(tx, tenantId);
  const agent = budgets.agents.find((one) => one.agent_id === agentId);
  const limits = [
    { by: 'tenant_budget' as const, ...budgets.tenant },
    ...(agent ? [{ by: 'agent_budget' as const, ...agent }] : []),
  ].filter((limit) => limit.remaining !== null);
  const tightest = limits.sort((a, b) => a.remaining! - b.remaining!)[0];
  if (!tightest) return null;
  if (tightest.remaining! <= 0) {
    const whose =
      tightest.by === 'tenant_budget'
        ? 'The tenant’s monthly budget for agent runs'
        : 'The agent’s monthly budget in this tenant';
    throw new Problem(
      402,
      `${whose} (${tightest.monthly_budget} credits) is spent: ${tightest.used} used this month. It starts again at ${budgets.resets_at}.`,
      {
        type: problemType('agent-budget-spent'),
        title: 'Agent budget spent',
        extensions: {
          budget: tightest.by,
          monthly_budget: tightest.monthly_budget,
          used: tightest.used,
          resets_at: budgets.resets_at,
        },
      },
    );
  }
  return { credits: tightest.remaining!, by: tightest.by };
}
