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
