-- Test mode, as Stripe has it: a tenant (set by a global admin) or a service
-- account (set when it is made) in test mode runs every job on the local
-- stand-ins at no charge, its jobs marked as test jobs, so an app can be built
-- and tested against the platform without spending (core/jobs/test-mode.ts).
alter table tenants add column test_mode boolean not null default false;
alter table service_accounts add column test_mode boolean not null default false;
alter table jobs add column test_mode boolean not null default false;
