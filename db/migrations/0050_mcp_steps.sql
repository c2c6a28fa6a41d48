-- A tool call made over MCP (api/mcp/server.ts) is recorded in the same table,
-- and the same shape, as the steps of agent runs (core/agents/run-steps.ts):
-- one record of what the tools did, whoever drove them, which global admins
-- read at GET /admin/agent-steps.
--
-- A run's step is named by its job and its number, as before. An MCP call
-- has no job and no number (the calls of one session may run at once, on any
-- API process): it is named by its own id, and its session's calls are
-- ordered by when they were recorded. The session's id is kept as a plain
-- value, not a reference: sessions are deleted after 30 idle minutes
-- (core/mcp/sessions.ts), and the record of what was done in one must outlive
-- it. Who called is kept for MCP calls (a run's caller is its job's), emptied
-- if the user or service account is deleted, as jobs.user_id is.
alter table agent_run_steps drop constraint agent_run_steps_pkey;

alter table agent_run_steps
  add column id uuid not null default gen_random_uuid(),
  add column source text not null default 'run' check (source in ('run', 'mcp')),
  add column mcp_session_id uuid,
  add column user_id uuid references users (id) on delete set null,
  add column service_account_id uuid references service_accounts (id) on delete set null,
  alter column job_id drop not null,
  alter column step drop not null,
  -- An MCP call that named no site (or was refused before one was found) belongs to no tenant.
  alter column tenant_id drop not null,
  -- A run's steps went with its job, and so with its tenant; an MCP call's go with its tenant directly.
  add foreign key (tenant_id) references tenants (id) on delete cascade;

alter table agent_run_steps add primary key (id);
-- recordStep's "on conflict (job_id, step)": a run records each step once. MCP calls (no job) never collide.
alter table agent_run_steps add constraint agent_run_steps_job_step_key unique (job_id, step);

alter table agent_run_steps add constraint agent_run_steps_source_fits check (
  case source
    when 'run' then job_id is not null and step is not null and tenant_id is not null
      and mcp_session_id is null and user_id is null and service_account_id is null
    when 'mcp' then job_id is null and step is null and mcp_session_id is not null and kind = 'tool'
      and (user_id is null or service_account_id is null)
    else false
  end
);

-- GET /admin/agent-steps: newest first, of everything, of a tenant, of a session.
create index agent_run_steps_created_idx on agent_run_steps (created_at, id);
create index agent_run_steps_tenant_idx on agent_run_steps (tenant_id, created_at, id);
create index agent_run_steps_session_idx on agent_run_steps (mcp_session_id, created_at, id)
  where mcp_session_id is not null;
-- A deleted user or service account empties its records' reference.
create index agent_run_steps_user_idx on agent_run_steps (user_id) where user_id is not null;
create index agent_run_steps_service_account_idx on agent_run_steps (service_account_id)
  where service_account_id is not null;
