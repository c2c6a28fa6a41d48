-- Agents: global records that global admins write and assign to tenants.
-- Members of an assigned tenant see an agent; nobody else learns it exists.
-- The knowledge base (documents and chunks) hangs off agents in a later migration.
create table agents (
  id uuid primary key default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  description text not null default '' check (length(description) <= 2000),
  instructions text not null default '' check (length(instructions) <= 100000),
  model text check (length(model) between 1 and 200),
  temperature real not null default 0.7 check (temperature between 0 and 2),
  -- A system prompt by its type (system_prompts.prompt_type); not a foreign key,
  -- so that a prompt can be deleted and written again without touching agents.
  system_prompt_type text check (system_prompt_type ~ '^[a-z0-9]+([_-][a-z0-9]+)*$' and length(system_prompt_type) <= 63),
  -- Names of the agent operations (MCP tools) an agent configured with it may call.
  tools text[] not null default '{}' check (cardinality(tools) <= 50),
  -- SET NULL: a media item deleted with force leaves the agent without its avatar.
  avatar_media_id uuid references media_items (id) on delete set null,
  status text not null default 'active' check (status in ('active', 'disabled')),
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index agents_created_idx on agents (created_at, id);
create index agents_avatar_idx on agents (avatar_media_id) where avatar_media_id is not null;
create trigger agents_updated_at before update on agents for each row execute function set_updated_at();

create table agent_tenants (
  agent_id uuid not null references agents (id) on delete cascade,
  tenant_id uuid not null references tenants (id) on delete cascade,
  assigned_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  primary key (agent_id, tenant_id)
);
-- A tenant's agents (GET /api/agents, the tenant's count).
create index agent_tenants_tenant_idx on agent_tenants (tenant_id, agent_id);
