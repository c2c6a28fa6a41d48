-- Price floors. Any tenant admin could price every kind of job at 0 on their
-- sites (and every self-service sign-up gets a tenant), though the operator
-- pays the providers. A site's own price set by a tenant admin now never goes
-- below the kind's floor: tenant_minimum on the kind's global price, or the
-- global price itself when null. A global admin may price a site below it
-- (set_by_global_admin); such a price stays as set.
--
-- The floor is applied where prices are read (core/credits/prices.ts), not
-- only when one is set: the sites that set 0 before this migration, and a
-- tenant's price that a later raise of the floor overtakes, are charged the
-- floor.
alter table cost_settings
  add column tenant_minimum numeric(14, 4) check (tenant_minimum >= 0),
  add column set_by_global_admin boolean not null default false,
  add constraint cost_settings_floor_global check (site_id is null or tenant_minimum is null),
  -- A floor above the price would lift a tenant's own price over the global one.
  add constraint cost_settings_floor_below_price check (tenant_minimum <= price),
  add constraint cost_settings_set_by_site check (site_id is not null or not set_by_global_admin);

-- An agent's temperature: real underflowed on tiny magnitudes the API allows
-- (1e-50 was a 500) and kept only about seven digits. Through numeric, so
-- that 0.7 stays 0.7 rather than float4's 0.699999988079071.
alter table agents alter column temperature type double precision using temperature::numeric::double precision;
