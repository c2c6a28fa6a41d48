-- API processes keep who-may-do-what in memory (sessions, service accounts,
-- sites and roles); every change that could take access away is announced on
-- the `access_changed` channel, whoever makes it, so each process forgets
-- what it knew at once. Payloads: `session:<id>` for one session, `all` for
-- anything rarer (roles, assignments, sites, tenants, users, service accounts).

create function access_session_changed() returns trigger language plpgsql as $$
begin
  if tg_op = 'DELETE' then
    perform pg_notify('access_changed', 'session:' || old.id);
  elsif new.revoked_at is distinct from old.revoked_at or new.expires_at is distinct from old.expires_at
     or new.user_id is distinct from old.user_id then
    perform pg_notify('access_changed', 'session:' || new.id);
  end if;
  return null;
end $$;
create trigger sessions_access_changed after update or delete on sessions
  for each row execute function access_session_changed();

-- Once per statement: a bulk change is one notification, and identical
-- payloads of one transaction are delivered once.
create function access_all_changed() returns trigger language plpgsql as $$
begin
  perform pg_notify('access_changed', 'all');
  return null;
end $$;

create trigger memberships_access_changed after insert or update or delete on memberships
  for each statement execute function access_all_changed();
create trigger site_users_access_changed after insert or update or delete on site_users
  for each statement execute function access_all_changed();
-- A new site or tenant takes nothing away, and nothing about it is cached before it exists.
create trigger sites_access_changed after update or delete on sites
  for each statement execute function access_all_changed();
create trigger tenants_access_changed after update or delete on tenants
  for each statement execute function access_all_changed();

-- Users and service accounts change often in ways access does not depend on
-- (a name, the last use), so only the columns it reads are watched.
create trigger users_access_changed after update of status, is_global_admin on users
  for each row when (old.status is distinct from new.status or old.is_global_admin is distinct from new.is_global_admin)
  execute function access_all_changed();
create trigger users_access_deleted after delete on users
  for each statement execute function access_all_changed();
create trigger service_accounts_access_changed after update of status, scopes, tenant_id on service_accounts
  for each row when (old.status is distinct from new.status or old.scopes is distinct from new.scopes
                     or old.tenant_id is distinct from new.tenant_id)
  execute function access_all_changed();
create trigger service_accounts_access_deleted after delete on service_accounts
  for each statement execute function access_all_changed();
