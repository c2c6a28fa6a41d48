-- Monthly budgets of agent runs, in credits per calendar month (UTC), set by
-- admins (core/agents/budgets.ts): one for all of a tenant's runs, and one for
-- each agent in each tenant it is assigned to. Null: no budget. A run's start
-- counts what the month's runs were charged, and what running ones hold
-- reserved, from the jobs themselves; the partial index keeps that to the
-- tenant's agent runs of the month however many other jobs it has.
alter table tenants add column agent_monthly_budget bigint check (agent_monthly_budget >= 0);
alter table agent_tenants add column monthly_budget bigint check (monthly_budget >= 0);
create index jobs_agent_runs_idx on jobs (tenant_id, created_at) where kind = 'agent_run';
