-- Agent runs (core/agents/runs.ts): a run is a job of kind agent_run; these
-- tables keep what jobs do not. A conversation holds the messages of
-- successive runs of one agent on one site, private to the member who began
-- it unless shared. A run's steps (a model call, a tool call, a retrieval)
-- are recorded as each ends, so a run killed mid-way resumes from its last
-- finished step, and what it is charged is the sum of its steps.
create table agent_conversations (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid not null references sites (id) on delete cascade,
  agent_id uuid not null references agents (id) on delete cascade,
  -- Who began it: a user, or a service account (actor_id alone).
  user_id uuid references users (id) on delete cascade,
  actor_id uuid not null,
  shared boolean not null default false,
  title text not null default '' check (length(title) <= 200),
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index agent_conversations_agent_idx on agent_conversations (site_id, agent_id, created_at, id);

create table agent_messages (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  conversation_id uuid not null references agent_conversations (id) on delete cascade,
  job_id uuid references jobs (id) on delete set null,
  role text not null check (role in ('user', 'assistant')),
  content text not null check (length(content) <= 200000),
  citations jsonb not null default '[]',
  created_at timestamptz not null default clock_timestamp()
);
create index agent_messages_conversation_idx on agent_messages (conversation_id, created_at, id);
-- A run answers once: its assistant message is written with its settle, at most one.
create unique index agent_messages_answer_key on agent_messages (job_id) where role = 'assistant';

create table agent_run_steps (
  job_id uuid not null references jobs (id) on delete cascade,
  step integer not null check (step >= 1),
  tenant_id uuid not null,
  kind text not null check (kind in ('model', 'tool', 'retrieval')),
  -- The model asked, or the tool called.
  name text not null,
  input jsonb not null,
  output jsonb not null,
  -- The tool call of the model's answer this step carries out (its id in the model's message).
  tool_call_id text,
  -- ok, or refused / failed with the problem the tool answered (the run goes on; the model is told).
  status text not null check (status in ('ok', 'refused', 'failed')),
  input_tokens integer not null default 0 check (input_tokens >= 0),
  output_tokens integer not null default 0 check (output_tokens >= 0),
  duration_ms integer not null check (duration_ms >= 0),
  -- Credits, to 6 places: the model's price for the step's tokens; tools and retrieval cost nothing here.
  cost numeric(18, 6) not null default 0,
  created_at timestamptz not null default clock_timestamp(),
  primary key (job_id, step)
);

do $$
declare
  owned text;
begin
  foreach owned in array array['agent_conversations', 'agent_messages', 'agent_run_steps'] loop
    execute format($policy$
      create policy tenant_isolation on %I
      using (
        (select current_setting('app.tenant_id', true)) = '*'
        or tenant_id = (select nullif(nullif(current_setting('app.tenant_id', true), '*'), '')::uuid)
      )$policy$, owned);
    execute format('alter table %I enable row level security', owned);
  end loop;
end $$;

create trigger agent_conversations_updated_at before update on agent_conversations
  for each row execute function set_updated_at();

-- Runs are charged their model's price per 1,000 tokens; this is the price of a
-- model the catalog does not know and the operator did not price (a compatible
-- server's own), and the floor a site's own price of agent runs starts from.
insert into cost_settings (kind, unit, price, description) values
  ('agent_run', '1k_tokens', 2, 'Agent runs, per 1,000 tokens (a model without a price of its own)');
