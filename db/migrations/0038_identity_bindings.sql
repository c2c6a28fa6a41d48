-- Three things that must end when what they were issued for changes (issue 36).

-- An OAuth sign-in belongs to the browser that started it: the start sets a
-- cookie holding a random value, the state row keeps its SHA-256, and the
-- callback finds the state only together with that cookie, so nobody can
-- finish their own sign-in in someone else's browser (login CSRF). Sign-ins
-- begun before this have no cookie to match: they are dropped and started again.
delete from oauth_states;
alter table oauth_states add column browser_hash bytea not null;

-- A password reset link works only while the password it was sent for is
-- the account's: the link's row keeps a digest of the password hash of that
-- moment, and any change of password (by its owner, an administrator, another
-- reset, an OAuth sign-in dropping a password nobody proved) leaves it
-- behind. Links sent before this carry no digest and no longer work.
create function password_hash_digest(password_hash text) returns bytea
  language sql immutable parallel safe
  as $$ select sha256(convert_to(coalesce(password_hash, ''), 'UTF8')) $$;
alter table email_tokens add column password_digest bytea;

-- A service account's access tokens carry a fingerprint of the secret they
-- were issued for (core/identity/service-accounts.ts), so rotating the secret
-- ends them; the API processes that keep the account in memory must hear of it.
drop trigger service_accounts_access_changed on service_accounts;
create trigger service_accounts_access_changed after update of status, scopes, tenant_id, secret_hash on service_accounts
  for each row when (old.status is distinct from new.status or old.scopes is distinct from new.scopes
                     or old.tenant_id is distinct from new.tenant_id or old.secret_hash is distinct from new.secret_hash)
  execute function access_all_changed();
