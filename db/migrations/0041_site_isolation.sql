-- Row-level security for the tenant-owned tables that carry no tenant_id
-- (0034 covered those that do): the rows of a site (search documents, search
-- terms and queries, view and request statistics, a page's and an element's
-- links, a site's prices), and rows that reach their tenant through another
-- row (a job's attempts, a published element's public copy, a credit
-- account's lots). Without a policy, a query acting for tenant A read tenant
-- B's rows of these tables. The scopes are 0034's: '*' every tenant, a
-- tenant's uuid only its rows, unset or '' none.
--
-- Cost: the setting is read once per statement (a scalar subquery, an
-- InitPlan), as in 0034. A site's rows are matched against the tenant's sites
-- (`site_id in (select ...)`, uncorrelated: PostgreSQL builds the set once
-- per statement, from sites_tenant_id_idx, and probes a hash per row). The
-- rows reached through another row test that row by its primary key
-- (`exists`, one index probe per row): their parents are many per tenant
-- (jobs, elements), too many to gather per statement. Acting for every
-- tenant short-circuits both.
--
-- test/db/tenant-isolation.test.ts fails for a later table that carries
-- site_id, or a key to a tenant-owned table, without such a policy.

-- Every table with a site_id and no tenant_id: one statement per table,
-- generated so that none is forgotten.
do $$
declare
  owned record;
begin
  for owned in
    select c.relname from pg_class c
    join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
    join pg_attribute a on a.attrelid = c.oid and a.attname = 'site_id' and not a.attisdropped
    where c.relkind in ('r', 'p')
      and not exists (select from pg_attribute t where t.attrelid = c.oid and t.attname = 'tenant_id' and not t.attisdropped)
    order by c.relname
  loop
    execute format('alter table %I enable row level security', owned.relname);
    execute format($policy$
      create policy tenant_isolation on %I
      using (
        (select current_setting('app.tenant_id', true)) = '*'
        or site_id in (select id from sites
                       where tenant_id = (select nullif(nullif(current_setting('app.tenant_id', true), '*'), '')::uuid))
      )$policy$, owned.relname);
  end loop;
end $$;

-- A price without a site is the platform's own (a kind's default): every
-- tenant's work is priced by it, so every scope reads it; only a scope of
-- every tenant (a global administrator) writes it.
create policy platform_prices on cost_settings for select using (site_id is null);

create policy tenant_isolation on job_attempts using (
  (select current_setting('app.tenant_id', true)) = '*'
  or exists (select from jobs j where j.id = job_attempts.job_id
             and j.tenant_id = (select nullif(nullif(current_setting('app.tenant_id', true), '*'), '')::uuid))
);
alter table job_attempts enable row level security;

create policy tenant_isolation on public_elements using (
  (select current_setting('app.tenant_id', true)) = '*'
  or exists (select from content_elements e where e.id = public_elements.master_id
             and e.tenant_id = (select nullif(nullif(current_setting('app.tenant_id', true), '*'), '')::uuid))
);
alter table public_elements enable row level security;

create policy tenant_isolation on credit_lots using (
  (select current_setting('app.tenant_id', true)) = '*'
  or exists (select from credit_accounts a where a.id = credit_lots.account_id
             and a.tenant_id = (select nullif(nullif(current_setting('app.tenant_id', true), '*'), '')::uuid))
);
alter table credit_lots enable row level security;

-- A deleted search document leaves a removal behind (0037), written by the
-- statement's trigger in the deleting statement's scope. When the deletion
-- is a site's (its cascade), the site is already gone from that scope, and
-- the removal would be refused; the trigger writes the platform's own log,
-- of rows the statement itself deleted, so it writes as the tables' owner.
alter function search_documents_removed() security definer set search_path = public, pg_temp;

-- Searching a site, as the tables' owner. A row-level policy keeps the
-- planner from using an index for any condition whose operator is not
-- leakproof, and none of full-text search's is (@@), nor pg_trgm's (%), nor
-- LIKE: under the policy above, searching 100,000 documents in PostgreSQL
-- went from 75 to 2 requests a second and completions from 543 to 37
-- (npm run bench -- search, as app_user). Each function below reads one
-- site's rows, the site given by its caller (core/search, which has already
-- admitted the caller to it), so it filters by its argument what the policy
-- would have: it runs as the owner (security definer, whom the policy does
-- not bind), and plans each call afresh, so a LIKE prefix and a locale
-- reach the planner as values.
alter function search_candidates(uuid, tsquery, text, text[], integer, integer, integer)
  security definer set search_path = public, pg_temp;

-- Titles that start with what was typed, then the site's most frequent words
-- completing its last word (core/search/suggest.ts). The patterns are LIKE
-- prefixes, escaped by the caller; a null word pattern asks for titles only.
create function search_completions(site uuid, title_pattern text, word_pattern text, last_word text, only_locale text,
                                   titles integer, words integer)
returns table (source text, text text, kind text, id uuid, path text)
language plpgsql stable security definer set search_path = public, pg_temp set plan_cache_mode = force_custom_plan as $$
#variable_conflict use_column
begin
  return query
  select c.source, c.text, c.kind, c.id, c.path from (
    (select 1 as part, row_number() over (order by lower(d.title) collate "C") as n, 'title' as source,
            d.title as text, d.kind, d.item_id as id, d.path
     from search_documents d
     where d.site_id = site and lower(d.title) collate "C" like title_pattern and (only_locale is null or d.locale = only_locale)
     order by lower(d.title) collate "C" limit titles)
    union all
    (select 2, row_number() over (order by sum(t.documents) desc, t.term), 'word', t.term, null, null, null
     from search_terms t
     where word_pattern is not null and t.site_id = site and t.term like word_pattern and t.term <> last_word
       and (only_locale is null or t.locale = only_locale)
     group by t.term order by sum(t.documents) desc, t.term limit words)
  ) c order by c.part, c.n;
end $$;

-- The site's words most alike `word` (pg_trgm), more documents winning a tie.
create function search_alike_terms(site uuid, word text, only_locale text, most integer)
returns table (term text)
language plpgsql stable security definer set search_path = public, pg_temp set plan_cache_mode = force_custom_plan as $$
#variable_conflict use_column
begin
  return query
  select t.term from search_terms t
  where t.site_id = site and t.term % word and (only_locale is null or t.locale = only_locale)
  group by t.term order by max(similarity(t.term, word)) desc, sum(t.documents) desc, t.term limit most;
end $$;

-- For each word no document of the site holds, the most alike word that some
-- do (core/search/correct.ts); null for a word the site has.
create function search_corrections(site uuid, words text[], only_locale text)
returns table (word text, fix text)
language plpgsql stable security definer set search_path = public, pg_temp set plan_cache_mode = force_custom_plan as $$
#variable_conflict use_column
begin
  return query
  select w.word,
         case when exists (select 1 from search_terms t
                           where t.site_id = site and t.term = w.word and (only_locale is null or t.locale = only_locale)) then null
         else (select t.term from search_terms t
               where t.site_id = site and t.term % w.word and (only_locale is null or t.locale = only_locale)
               order by similarity(t.term, w.word) desc, t.documents desc, t.term limit 1) end
  from unnest(words) as w (word);
end $$;
