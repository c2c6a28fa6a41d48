-- Knowledge bases: the documents an agent draws on, split into chunks that are
-- indexed for full text (and embedded when a provider is configured), and
-- searched by core/knowledge/search.ts.
--
-- A document belongs to a site of a tenant the agent is assigned to: a post
-- of that site (snapshotted with its version, so a later change of the post
-- shows as stale) or a text given for that site. Agents are shared by
-- tenants; their documents are not: callers see the documents of the sites
-- they reach. Removing the agent from a tenant removes that tenant's
-- documents with it (the foreign key to agent_tenants).
create table knowledge_documents (
  id uuid primary key default gen_random_uuid(),
  agent_id uuid not null,
  tenant_id uuid not null,
  site_id uuid not null,
  kind text not null check (kind in ('post', 'text')),
  title text not null check (length(title) between 1 and 300),
  -- The text search configuration of its chunks (search_config, 0023).
  locale text not null check (length(locale) between 2 and 35),
  -- The snapshot: a post's excerpt and body as they were, or the text given.
  body text not null check (length(body) <= 1000000),
  body_format text not null check (body_format in ('plain', 'markdown', 'html')),
  -- SET NULL: a deleted post leaves its snapshot, which says the post is gone.
  post_id uuid references posts (id) on delete set null,
  post_version integer,
  -- Indexing: the state, a timestamp per stage reached, and the error of a failed run.
  index_state text not null default 'waiting'
    check (index_state in ('waiting', 'parsing', 'splitting', 'indexing', 'completed', 'error')),
  index_job_id uuid references jobs (id) on delete set null,
  index_error jsonb check (index_error is null or jsonb_typeof(index_error) = 'object'),
  waiting_at timestamptz not null default now(),
  parsing_at timestamptz,
  splitting_at timestamptz,
  indexing_at timestamptz,
  completed_at timestamptz,
  error_at timestamptz,
  -- What the chunks were made from (text, settings, embedding model): a run that finds it unchanged does nothing.
  indexed_hash text,
  chunk_tokens integer check (chunk_tokens > 0),
  overlap_tokens integer check (overlap_tokens >= 0),
  embedding_model text,
  tokens integer check (tokens >= 0),
  chunks integer not null default 0 check (chunks >= 0),
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (agent_id, tenant_id) references agent_tenants (agent_id, tenant_id) on delete cascade,
  foreign key (site_id, tenant_id) references sites (id, tenant_id) on delete cascade,
  check ((kind = 'post') = (post_version is not null)),
  check (kind = 'post' or post_id is null),
  check (kind <> 'text' or body_format in ('plain', 'markdown'))
);
-- A post is in an agent's knowledge base once.
create unique index knowledge_documents_post_key on knowledge_documents (agent_id, post_id) where post_id is not null;
create index knowledge_documents_agent_idx on knowledge_documents (agent_id, created_at, id);
create index knowledge_documents_post_idx on knowledge_documents (post_id) where post_id is not null;
create index knowledge_documents_site_idx on knowledge_documents (site_id);
create index knowledge_documents_job_idx on knowledge_documents (index_job_id) where index_job_id is not null;
create trigger knowledge_documents_updated_at before update on knowledge_documents
  for each row execute function set_updated_at();

-- A document's chunks: each a slice of its cleaned text (start and end
-- offsets), its tokens, its full-text vector (the document's title, then the
-- chunk) and, when a provider embedded it, its embedding, normalised to
-- length 1 (so cosine similarity is a dot product). The text and the
-- embedding go out of line (TOAST) and the full-text vector stays in the
-- row, so ranking the matches of a search reads the heap rows only.
create table knowledge_chunks (
  id uuid primary key default gen_random_uuid(),
  document_id uuid not null references knowledge_documents (id) on delete cascade,
  agent_id uuid not null,
  tenant_id uuid not null,
  site_id uuid not null,
  -- The document's, whose text search configuration made `tsv`.
  locale text not null,
  ordinal integer not null check (ordinal >= 0),
  content text not null,
  tokens integer not null check (tokens >= 0),
  start_offset integer not null,
  end_offset integer not null,
  tsv tsvector not null,
  embedding real[],
  unique (document_id, ordinal),
  check (start_offset between 0 and end_offset)
)
with (toast_tuple_target = 128);
alter table knowledge_chunks alter column tsv set storage main, alter column embedding set storage external;
-- An agent's matches, without walking other agents' (btree_gin, 0023).
create index knowledge_chunks_text_idx on knowledge_chunks using gin (agent_id, tsv);

-- The embedded chunks, by model, each with a 256-bit sign signature of its
-- embedding (random hyperplanes, core/knowledge/embeddings.ts): the share of
-- bits two signatures differ in estimates the angle between the vectors. A
-- search ranks all of an agent's signatures by Hamming distance to the
-- query's (these narrow rows are all it reads) and computes exact cosine
-- similarity for the nearest few only.
create table knowledge_signatures (
  chunk_id uuid primary key references knowledge_chunks (id) on delete cascade,
  agent_id uuid not null,
  tenant_id uuid not null,
  site_id uuid not null,
  model text not null,
  signature bit(256) not null
);
create index knowledge_signatures_agent_idx on knowledge_signatures (agent_id, model);

-- Embeddings are pgvector's `vector` where the server has the extension (and
-- this migration may create it), else real[]; core/knowledge/vector.ts asks
-- which.
do $$
begin
  begin
    create extension if not exists vector;
  exception when others then
    raise notice 'pgvector is not available (%): knowledge embeddings are stored as real[]', sqlerrm;
  end;
  if exists (select from pg_extension where extname = 'vector') then
    alter table knowledge_chunks alter column embedding type vector using embedding::vector;
  end if;
end $$;

-- How many chunks of an agent hold each lexeme, and how many chunks it has
-- in each language: a search picks its candidates among the chunks holding
-- the query's rarer words and weighs each word by how rare it is
-- (core/knowledge/full-text.ts), and reads the query in the languages the
-- agent's chunks are in.
--
-- Indexing a document of 2,000 words changes the counts of a thousand
-- lexemes, the same common ones for every document of the agent: counting in
-- place would make concurrent indexing runs queue on those rows until each
-- commits. So every statement on chunks appends its changes to
-- knowledge_count_changes (no row is shared), and knowledge_counts_fold moves
-- an agent's changes into the counts, one fold at a time per agent, when an
-- indexing run starts and no fold ran in the last seconds. The counts read by
-- a search are the folded counts plus the changes not folded yet
-- (knowledge_lexeme_chunks and knowledge_locale_counts).
create table knowledge_terms (
  agent_id uuid not null references agents (id) on delete cascade,
  lexeme text not null,
  chunks integer not null,
  primary key (agent_id, lexeme)
);
create table knowledge_locales (
  agent_id uuid not null references agents (id) on delete cascade,
  locale text not null,
  chunks integer not null,
  primary key (agent_id, locale)
);
-- A change of a lexeme's count (locale null) or of a locale's (lexeme null).
-- No foreign key: a thousand rows a document would be checked one by one;
-- an agent's deletion removes its rows instead (below).
create table knowledge_count_changes (
  agent_id uuid not null,
  lexeme text,
  locale text,
  n integer not null,
  check ((lexeme is null) <> (locale is null))
);
create index knowledge_count_changes_idx on knowledge_count_changes (agent_id, lexeme);
create function knowledge_agents_deleted() returns trigger language plpgsql as $$
begin
  delete from knowledge_count_changes c using gone where c.agent_id = gone.id;
  return null;
end $$;
create trigger agents_knowledge_deleted after delete on agents referencing old table as gone
  for each statement execute function knowledge_agents_deleted();

-- A lexeme's count as a function, not a view: a search asks for a few
-- lexemes, and a grouping view would sum all the agent's before the join.
create function knowledge_lexeme_chunks(agent uuid, word text) returns integer
language sql stable parallel safe as $$
  select (coalesce((select chunks from knowledge_terms where agent_id = agent and lexeme = word), 0)
        + coalesce((select sum(n) from knowledge_count_changes where agent_id = agent and lexeme = word), 0))::int
$$;
create view knowledge_locale_counts as
  select agent_id, locale, sum(chunks)::int as chunks from (
    select agent_id, locale, chunks from knowledge_locales
    union all
    select agent_id, locale, n from knowledge_count_changes where lexeme is null
  ) c group by agent_id, locale;

-- Appends the changes of a statement's chunks added (sign 1) and removed
-- (-1), summed per lexeme and per locale. (An agent being deleted takes its
-- counts with it: its cascade may run first, hence the exists.)
create function knowledge_chunks_counted() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    insert into knowledge_count_changes (agent_id, lexeme, locale, n)
    select c.agent_id, lexeme, null, count(*) from chunk_new c, unnest(tsvector_to_array(c.tsv)) as lexeme
    where exists (select 1 from agents a where a.id = c.agent_id) group by 1, 2
    union all
    select c.agent_id, null, c.locale, count(*) from chunk_new c where exists (select 1 from agents a where a.id = c.agent_id)
    group by 1, 3;
  elsif tg_op = 'DELETE' then
    insert into knowledge_count_changes (agent_id, lexeme, locale, n)
    select c.agent_id, lexeme, null, -count(*) from chunk_old c, unnest(tsvector_to_array(c.tsv)) as lexeme
    where exists (select 1 from agents a where a.id = c.agent_id) group by 1, 2
    union all
    select c.agent_id, null, c.locale, -count(*) from chunk_old c where exists (select 1 from agents a where a.id = c.agent_id)
    group by 1, 3;
  else
    insert into knowledge_count_changes (agent_id, lexeme, locale, n)
    select agent_id, lexeme, null, sum(n) from (
      select agent_id, tsv, 1 as n from chunk_new union all select agent_id, tsv, -1 from chunk_old
    ) c, unnest(tsvector_to_array(c.tsv)) as lexeme
    where exists (select 1 from agents a where a.id = c.agent_id) group by 1, 2 having sum(n) <> 0
    union all
    select agent_id, null, locale, sum(n) from (
      select agent_id, locale, 1 as n from chunk_new union all select agent_id, locale, -1 from chunk_old
    ) c where exists (select 1 from agents a where a.id = c.agent_id) group by 1, 3 having sum(n) <> 0;
  end if;
  return null;
end $$;
create trigger knowledge_chunks_counted_ins after insert on knowledge_chunks referencing new table as chunk_new
  for each statement execute function knowledge_chunks_counted();
create trigger knowledge_chunks_counted_upd after update on knowledge_chunks referencing new table as chunk_new old table as chunk_old
  for each statement execute function knowledge_chunks_counted();
create trigger knowledge_chunks_counted_del after delete on knowledge_chunks referencing old table as chunk_old
  for each statement execute function knowledge_chunks_counted();

-- When each agent's changes were last folded.
create table knowledge_folds (
  agent_id uuid primary key references agents (id) on delete cascade,
  folded_at timestamptz not null
);

-- Moves the agent's changes into its counts, in key order, dropping counts
-- that reach zero. Returns at once if another fold of the agent is running
-- (the changes it cannot see yet wait for the next fold, and are counted
-- meanwhile all the same), or if one ran within `at_most_every`: folding
-- many runs' changes at once sums each common lexeme's once. Derived data,
-- so not worth waiting for the disk at commit: a crash loses the fold and
-- the deletion of the changes together.
create function knowledge_counts_fold(agent uuid, at_most_every interval default interval '0')
returns void language plpgsql as $$
declare
  emptied_locales text[];
  emptied_lexemes text[];
begin
  if not pg_try_advisory_xact_lock(hashtext('knowledge_counts_fold'), hashtext(agent::text)) then return; end if;
  if exists (select 1 from knowledge_folds where agent_id = agent and folded_at > now() - at_most_every) then return; end if;
  perform set_config('synchronous_commit', 'off', true);
  insert into knowledge_folds (agent_id, folded_at) values (agent, now())
  on conflict (agent_id) do update set folded_at = excluded.folded_at;
  with moved as (delete from knowledge_count_changes where agent_id = agent returning lexeme, locale, n),
  summed as (select lexeme, locale, sum(n)::int as n from moved group by 1, 2 having sum(n) <> 0),
  locales as (
    insert into knowledge_locales as k (agent_id, locale, chunks)
    select agent, locale, n from summed where locale is not null order by locale
    on conflict (agent_id, locale) do update set chunks = k.chunks + excluded.chunks
    returning locale, chunks
  ),
  lexemes as (
    insert into knowledge_terms as t (agent_id, lexeme, chunks)
    select agent, lexeme, n from summed where lexeme is not null order by lexeme
    on conflict (agent_id, lexeme) do update set chunks = t.chunks + excluded.chunks
    returning lexeme, chunks
  )
  select array(select locale from locales where chunks <= 0), array(select lexeme from lexemes where chunks <= 0)
  into emptied_locales, emptied_lexemes;
  delete from knowledge_locales where agent_id = agent and locale = any(emptied_locales);
  delete from knowledge_terms where agent_id = agent and lexeme = any(emptied_lexemes);
end $$;

-- Paid per 1,000 tokens embedded (0004 priced rag_index per 1,000 characters
-- before the job existed); indexing for full text alone embeds nothing and is
-- free. Site overrides take the new unit, keeping their price.
update cost_settings
set unit = '1k_tokens',
    description = 'Knowledge-base indexing, per 1,000 tokens embedded (full-text indexing alone is free)'
where kind = 'rag_index';
