-- MCP sessions (POST /mcp initialize ... DELETE /mcp), kept here rather than
-- in the memory of the API process that opened them, so that any process
-- serves any session and /mcp needs no routing by Mcp-Session-Id
-- (core/mcp/sessions.ts). A session is its caller's: a user's (across the
-- tenants they belong to, as their requests are) or a service account's
-- (within its tenant, whose id it carries for row-level security), and it
-- may be configured with an agent. What the SDK keeps per session beyond
-- that (the transport's streams) lives only as long as one request.
create table mcp_sessions (
  id uuid primary key,
  user_id uuid references users (id) on delete cascade,
  service_account_id uuid references service_accounts (id) on delete cascade,
  -- The service account's tenant; null for a user's session, which no tenant owns.
  tenant_id uuid references tenants (id) on delete cascade,
  -- A session configured with an agent ends with the agent.
  agent_id uuid references agents (id) on delete cascade,
  created_at timestamptz not null default now(),
  -- Kept to the minute (core/mcp/sessions.ts): idle past 30 minutes, the session is over.
  last_used_at timestamptz not null default now(),
  check ((user_id is null) <> (service_account_id is null)),
  check ((service_account_id is null) = (tenant_id is null))
);

-- A caller's sessions, most recently used first: the few kept per caller.
create index mcp_sessions_user_idx on mcp_sessions (user_id, last_used_at) where user_id is not null;
create index mcp_sessions_service_account_idx on mcp_sessions (service_account_id, last_used_at)
  where service_account_id is not null;
-- Expired sessions, removed as new ones open.
create index mcp_sessions_last_used_idx on mcp_sessions (last_used_at);
create index mcp_sessions_agent_idx on mcp_sessions (agent_id) where agent_id is not null;
create index mcp_sessions_tenant_idx on mcp_sessions (tenant_id) where tenant_id is not null;

-- As 0034: a scope of one tenant sees that tenant's service accounts'
-- sessions; a user's session (no tenant) is seen in the scope of every tenant,
-- which is the one a user's /mcp request acts in.
alter table mcp_sessions enable row level security;
create policy tenant_isolation on mcp_sessions
using (
  (select current_setting('app.tenant_id', true)) = '*'
  or tenant_id = (select nullif(nullif(current_setting('app.tenant_id', true), '*'), '')::uuid)
);
