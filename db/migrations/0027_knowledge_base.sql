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
-- offsets), its tokens, and its full-text vector (the document's title, then
-- the chunk). The texts go out of line (TOAST) and the vector stays in the
-- row, so ranking the matches of a search reads small heap rows.
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
  unique (document_id, ordinal),
  check (start_offset between 0 and end_offset)
)
with (toast_tuple_target = 128);
alter table knowledge_chunks alter column tsv set storage main;
-- An agent's matches, without walking other agents' (btree_gin, 0023).
create index knowledge_chunks_text_idx on knowledge_chunks using gin (agent_id, tsv);

-- A chunk's embedding, normalised to length 1 (so cosine similarity is the
-- dot product), and a 256-bit sign signature of it (random hyperplanes, see
-- core/knowledge/embeddings.ts). Without pgvector, a search ranks every
-- embedding of the agent by the signatures' Hamming distance (narrow rows:
-- the embedding goes out of line) and computes exact cosine similarity for
-- the nearest; with pgvector the column is a `vector` and is ranked exactly.
create table knowledge_embeddings (
  chunk_id uuid primary key references knowledge_chunks (id) on delete cascade,
  agent_id uuid not null,
  tenant_id uuid not null,
  site_id uuid not null,
  model text not null,
  signature bit(256) not null,
  embedding real[] not null
)
with (toast_tuple_target = 128);
alter table knowledge_embeddings alter column embedding set storage external;
create index knowledge_embeddings_agent_idx on knowledge_embeddings (agent_id, model);

-- pgvector where the server has it (this migration may not be allowed to
-- create it, or the package may be missing: then real[] it is).
do $$
begin
  begin
    create extension if not exists vector;
  exception when others then
    raise notice 'pgvector is not available (%): knowledge embeddings are stored as real[]', sqlerrm;
  end;
  if exists (select from pg_extension where extname = 'vector') then
    alter table knowledge_embeddings alter column embedding type vector using embedding::vector;
  end if;
end $$;

-- How many chunks of an agent hold each lexeme, and how many chunks it has
-- in each language: a search ranks the chunks holding its rarer words first
-- and weighs each word by how rare it is (core/knowledge/full-text.ts), and
-- reads the query in the languages the agent's chunks are in.
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

-- Each statement's chunks added (sign 1) and removed (-1), summed per lexeme
-- and per locale, written in key order (two writers of one agent take the
-- rows in the same order), and only where a count changes.
create function knowledge_counts_apply(agents uuid[], locales text[], vectors tsvector[], signs int[])
returns void language plpgsql as $$
declare
  emptied_agents uuid[];
  emptied_keys text[];
begin
  -- (An agent being deleted takes its counts with it: its cascade may run first, hence the exists.)
  with up as (
    insert into knowledge_locales as k (agent_id, locale, chunks)
    select c.agent_id, c.locale, sum(c.n) from unnest(agents, locales, signs) as c (agent_id, locale, n)
    where exists (select 1 from agents a where a.id = c.agent_id)
    group by 1, 2 having sum(c.n) <> 0 order by 1, 2
    on conflict (agent_id, locale) do update set chunks = k.chunks + excluded.chunks
    returning agent_id, locale, chunks
  )
  select array_agg(agent_id), array_agg(locale) into emptied_agents, emptied_keys from up where chunks <= 0;
  delete from knowledge_locales k using unnest(emptied_agents, emptied_keys) as e (agent_id, locale)
  where k.agent_id = e.agent_id and k.locale = e.locale;

  with up as (
    insert into knowledge_terms as t (agent_id, lexeme, chunks)
    select c.agent_id, lexeme, sum(c.n)
    from unnest(agents, vectors, signs) as c (agent_id, tsv, n), unnest(tsvector_to_array(c.tsv)) as lexeme
    where exists (select 1 from agents a where a.id = c.agent_id)
    group by 1, 2 having sum(c.n) <> 0 order by 1, 2
    on conflict (agent_id, lexeme) do update set chunks = t.chunks + excluded.chunks
    returning agent_id, lexeme, chunks
  )
  select array_agg(agent_id), array_agg(lexeme) into emptied_agents, emptied_keys from up where chunks <= 0;
  delete from knowledge_terms t using unnest(emptied_agents, emptied_keys) as e (agent_id, lexeme)
  where t.agent_id = e.agent_id and t.lexeme = e.lexeme;
end $$;

create function knowledge_chunks_counted() returns trigger language plpgsql as $$
begin
  if tg_op = 'INSERT' then
    perform knowledge_counts_apply(array_agg(agent_id), array_agg(locale), array_agg(tsv), array_agg(1)) from chunk_new;
  elsif tg_op = 'DELETE' then
    perform knowledge_counts_apply(array_agg(agent_id), array_agg(locale), array_agg(tsv), array_agg(-1)) from chunk_old;
  else
    perform knowledge_counts_apply(array_agg(agent_id), array_agg(locale), array_agg(tsv), array_agg(n))
    from (select agent_id, locale, tsv, 1 as n from chunk_new union all select agent_id, locale, tsv, -1 from chunk_old) c;
  end if;
  return null;
end $$;
create trigger knowledge_chunks_terms_ins after insert on knowledge_chunks referencing new table as chunk_new
  for each statement execute function knowledge_chunks_counted();
create trigger knowledge_chunks_terms_upd after update on knowledge_chunks referencing new table as chunk_new old table as chunk_old
  for each statement execute function knowledge_chunks_counted();
create trigger knowledge_chunks_terms_del after delete on knowledge_chunks referencing old table as chunk_old
  for each statement execute function knowledge_chunks_counted();

-- Paid per 1,000 tokens embedded (0004 priced rag_index per 1,000 characters
-- before the job existed); indexing for full text alone embeds nothing and is
-- free. Site overrides take the new unit, keeping their price.
update cost_settings
set unit = '1k_tokens',
    description = 'Knowledge-base indexing, per 1,000 tokens embedded (full-text indexing alone is free)'
where kind = 'rag_index';
