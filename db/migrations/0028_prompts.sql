-- System prompts and transfer prompts (core/system-prompts/, core/transferprompts/).
-- Both are global: global admins write them, every signed-in caller reads them.

-- A system prompt is the guidance text of a kind of generation (seo, transform,
-- translate, website, agent, ...), addressed by its type. Every save that changes
-- it is a new version; the prompt row names the current one, and its text is that
-- version's. A job copies the text it will run with into its input when it is
-- submitted, so deleting a prompt (which takes its versions with it) or changing
-- it never changes a job already submitted.
create table system_prompts (
  id uuid primary key default gen_random_uuid(),
  -- The same rule as agents.system_prompt_type, which names a prompt by it.
  prompt_type text not null unique
    check (prompt_type ~ '^[a-z0-9]+([_-][a-z0-9]+)*$' and length(prompt_type) <= 63),
  version int not null default 1 check (version >= 1),
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create trigger system_prompts_updated_at before update on system_prompts
  for each row execute function set_updated_at();

create table system_prompt_versions (
  prompt_id uuid not null references system_prompts (id) on delete cascade,
  version int not null check (version >= 1),
  content text not null check (length(content) between 1 and 50000),
  description text not null default '' check (length(description) <= 2000),
  changed_by uuid references users (id) on delete set null,
  changed_at timestamptz not null default now(),
  primary key (prompt_id, version)
);

-- A transfer prompt is a named template for handing work from one agent or step
-- to another; `variables` declares the {{names}} its template uses, each with
-- what it means: [{"name": "...", "description": "..."}]. That the two agree is
-- checked on every save (core/transferprompts/template.ts).
create table transfer_prompts (
  id uuid primary key default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  description text not null default '' check (length(description) <= 2000),
  template text not null check (length(template) between 1 and 50000),
  variables jsonb not null default '[]' check (jsonb_typeof(variables) = 'array'),
  created_by uuid references users (id) on delete set null,
  updated_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- Names are unique regardless of case: "Handoff" and "handoff" would be the same prompt to a person.
create unique index transfer_prompts_name_key on transfer_prompts (lower(name));
create trigger transfer_prompts_updated_at before update on transfer_prompts
  for each row execute function set_updated_at();
