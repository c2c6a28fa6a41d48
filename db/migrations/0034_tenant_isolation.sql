-- Tenant isolation in the database, as a backstop behind the tenant filters
-- every query already writes: row-level security on every table that
-- carries tenant_id, so that a query which forgets its filter sees only the
-- rows of the tenant the connection acts for, never another tenant's.
--
-- Whom it binds: the application role `app_user` (created here when the
-- migrating user may create roles), which owns nothing and cannot bypass
-- row security. The API and the worker act as it when DATABASE_APP_ROLE
-- names it (db/tenant-scope.ts). The tables' owner (whoever runs the
-- migrations) and superusers are not bound (no FORCE): migrations,
-- graphile-worker's own connections and maintenance by hand see every row.
--
-- What it reads: the session setting app.tenant_id, which the application
-- sets on each connection before each statement (db/tenant-scope.ts):
--   a tenant's uuid  only that tenant's rows are visible, and only its rows
--                    may be written (the same check on insert and update);
--   '*'              every tenant's rows: code that crosses tenants by
--                    nature (global administration, sign-in, the worker's
--                    own bookkeeping, billing webhooks) says so explicitly;
--   unset or ''      nothing at all: a connection as app_user that never said
--                    whom it acts for sees no tenant's rows.
-- Any other value fails a statement that meets a row (the cast), rather than guessing.
--
-- The setting is read through scalar subqueries, so PostgreSQL evaluates it
-- once per statement (an InitPlan) rather than once per row, and the
-- comparison with tenant_id can use an index on it.

do $$
begin
  if not exists (select from pg_roles where rolname = 'app_user') then
    if (select rolsuper or rolcreaterole from pg_roles where rolname = current_user) then
      begin
        create role app_user nologin nobypassrls;
      -- Two databases of one cluster migrated at once (test templates) race to create it.
      exception when duplicate_object or unique_violation then null;
      end;
    else
      raise notice 'role app_user does not exist and % may not create it: create it (nologin nobypassrls) and run the grants of 0034 to use DATABASE_APP_ROLE', current_user;
    end if;
  end if;
end $$;

do $$
begin
  if not exists (select from pg_roles where rolname = 'app_user') then
    return;
  end if;
  -- The connecting user becomes the role by SET ROLE (a startup option):
  -- it must be a member. Superusers are members of every role already.
  if not pg_has_role(current_user, 'app_user', 'member') then
    grant app_user to current_user;
  end if;
  grant usage on schema public to app_user;
  grant select, insert, update, delete on all tables in schema public to app_user;
  grant usage, select on all sequences in schema public to app_user;
  grant execute on all functions in schema public to app_user;
  -- What later migrations create, and graphile-worker's schema (created after
  -- ours on a new database, by the same user), is granted as it is made.
  alter default privileges grant usage on schemas to app_user;
  alter default privileges grant select, insert, update, delete on tables to app_user;
  alter default privileges grant usage, select on sequences to app_user;
  alter default privileges grant execute on functions to app_user;
  -- The monitoring endpoints read every session's state in pg_stat_activity,
  -- which a role that is not the sessions' own sees blank without this.
  begin
    grant pg_read_all_stats to app_user;
  exception when insufficient_privilege then
    raise notice 'grant pg_read_all_stats to app_user for the monitoring endpoints to see every session';
  end;
end $$;

-- graphile-worker's tables: the API queues jobs (graphile_worker.add_job, in
-- the transaction of the rows that need them) and the worker moves its own
-- entries, both as app_user. graphile-worker turns row security on for its
-- private tables with no policy, which refuses every row to a role that
-- does not own them; app_user is given all of them (the queue holds no
-- tenant's content). graphile-worker migrates after our files, and a new
-- database has no such schema yet: db/migrate.ts calls this after every run
-- of graphile-worker's migrations, and it is idempotent.
create function app_user_graphile_worker_access() returns void language plpgsql as $$
declare
  private record;
begin
  if not exists (select from pg_roles where rolname = 'app_user')
     or not exists (select from pg_namespace where nspname = 'graphile_worker') then
    return;
  end if;
  grant usage on schema graphile_worker to app_user;
  grant select, insert, update, delete on all tables in schema graphile_worker to app_user;
  grant usage, select on all sequences in schema graphile_worker to app_user;
  grant execute on all functions in schema graphile_worker to app_user;
  for private in
    select c.relname from pg_class c join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'graphile_worker'
    where c.relkind in ('r', 'p') and c.relrowsecurity
      and not exists (select from pg_policy p where p.polrelid = c.oid and p.polname = 'app_user_queue')
  loop
    execute format('create policy app_user_queue on graphile_worker.%I to app_user using (true) with check (true)',
                   private.relname);
  end loop;
end $$;

select app_user_graphile_worker_access();

-- The policy, on every table of the schema with a tenant_id column: one
-- statement per table, generated so that none is forgotten
-- (test/db/tenant-isolation.test.ts fails for a later table without it).
do $$
declare
  owned record;
begin
  for owned in
    select c.relname from pg_class c
    join pg_namespace n on n.oid = c.relnamespace and n.nspname = 'public'
    join pg_attribute a on a.attrelid = c.oid and a.attname = 'tenant_id' and not a.attisdropped
    where c.relkind in ('r', 'p')
    order by c.relname
  loop
    execute format('alter table %I enable row level security', owned.relname);
    execute format($policy$
      create policy tenant_isolation on %I
      using (
        (select current_setting('app.tenant_id', true)) = '*'
        or tenant_id = (select nullif(nullif(current_setting('app.tenant_id', true), '*'), '')::uuid)
      )$policy$, owned.relname);
  end loop;
end $$;
