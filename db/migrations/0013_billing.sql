-- Billing: the global price list, credits that expire, credit packages sold
-- through Stripe, and subscription plans that grant monthly credits. Credits
-- still move only through the ledger (core/credits/accounts.ts applyEntry).

-- Prices: one global price per kind and unit, of which at most one per kind
-- is active (what jobs are charged); sites override the active one.
alter table cost_settings add column active boolean not null default true;
alter table cost_settings drop constraint cost_settings_site_id_kind_key;
create unique index cost_settings_global_key on cost_settings (kind, unit) where site_id is null;
create unique index cost_settings_active_key on cost_settings (kind) where site_id is null and active;
create unique index cost_settings_site_key on cost_settings (site_id, kind) where site_id is not null;

-- Ledger entries: expiring grants, the entry that takes expired credits
-- away, and a key for entries that must happen at most once (a payment's
-- credits, an invoice's, a period's free credits, a lot's expiry): a
-- constraint, not a check in code.
alter table credit_entries drop constraint credit_entries_kind_check;
alter table credit_entries add constraint credit_entries_kind_check
  check (kind in ('grant', 'purchase', 'allocation', 'reservation', 'release', 'debit', 'refund', 'adjustment', 'expiry', 'subscription'));
alter table credit_entries add column expires_at timestamptz;
alter table credit_entries add column once_key text;
create unique index credit_entries_once_key on credit_entries (once_key) where once_key is not null;
create index credit_entries_created_idx on credit_entries (created_at, kind);

-- What is left of each expiring grant. Spending takes the soonest-expiring
-- credits first; credits that never expire go last.
create table credit_lots (
  id uuid primary key references credit_entries (id) on delete cascade,
  account_id uuid not null references credit_accounts (id) on delete cascade,
  granted bigint not null check (granted > 0),
  remaining bigint not null check (remaining >= 0 and remaining <= granted),
  expires_at timestamptz not null,
  expired_at timestamptz
);
create index credit_lots_account_idx on credit_lots (account_id, expires_at, id) where remaining > 0;
create index credit_lots_due_idx on credit_lots (expires_at) where expired_at is null;

-- Runs once per entry, inside the statement that wrote it, after the
-- account's row is locked by that statement's update: each query here sees
-- every other spender's committed changes to the lots.
create function credit_lots_follow() returns trigger language plpgsql as $$
begin
  if new.amount > 0 and new.expires_at is not null then
    insert into credit_lots (id, account_id, granted, remaining, expires_at)
    values (new.id, new.account_id, new.amount, new.amount, new.expires_at);
  elsif new.amount < 0 and new.kind <> 'expiry' then
    with ordered as (
      select id, remaining,
             coalesce(sum(remaining) over (order by expires_at, id rows between unbounded preceding and 1 preceding), 0) as before
      from credit_lots where account_id = new.account_id and remaining > 0
    )
    update credit_lots l set remaining = l.remaining - least(o.remaining, -new.amount - o.before)
    from ordered o where l.id = o.id and o.before < -new.amount;
  end if;
  return null;
end $$;
create trigger credit_entries_lots after insert on credit_entries
  for each row when (new.amount <> 0) execute function credit_lots_follow();

-- Credit packages sold through Stripe Checkout.
create table credit_packages (
  id uuid primary key default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  credits bigint not null check (credits > 0),
  -- In the currency's minor unit (cents).
  price bigint not null check (price > 0),
  currency text not null check (currency ~ '^[a-z]{3}$'),
  active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create trigger credit_packages_updated_at before update on credit_packages
  for each row execute function set_updated_at();

-- One purchase of a package by a user on a site, from the Checkout Session
-- to its credits and any refund.
create table payments (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid not null,
  user_id uuid not null references users (id) on delete cascade,
  package_id uuid references credit_packages (id) on delete set null,
  package_name text not null,
  credits bigint not null check (credits > 0),
  amount bigint not null check (amount > 0),
  currency text not null,
  status text not null default 'pending'
    check (status in ('pending', 'paid', 'failed', 'expired', 'refunded', 'partially_refunded')),
  stripe_session_id text unique,
  stripe_payment_intent_id text,
  amount_refunded bigint not null default 0 check (amount_refunded >= 0),
  credits_granted bigint not null default 0,
  credits_taken_back bigint not null default 0,
  -- Refunded credits that had been spent already: what the buyer owes.
  credits_owed bigint not null default 0,
  paid_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (site_id, tenant_id) references sites (id, tenant_id) on delete cascade
);
create index payments_site_idx on payments (site_id, created_at, id);
create index payments_intent_idx on payments (stripe_payment_intent_id) where stripe_payment_intent_id is not null;
create trigger payments_updated_at before update on payments
  for each row execute function set_updated_at();
alter table credit_entries add foreign key (payment_id) references payments (id) on delete set null;

-- Subscription plans; a tenant without a subscription is on the free plan.
create table plans (
  id uuid primary key default gen_random_uuid(),
  name text not null check (length(name) between 1 and 200),
  monthly_credits bigint not null check (monthly_credits >= 0),
  price bigint not null default 0 check (price >= 0),
  currency text not null default 'usd' check (currency ~ '^[a-z]{3}$'),
  stripe_price_id text unique,
  storage_quota_bytes bigint check (storage_quota_bytes >= 0),
  is_free boolean not null default false,
  active boolean not null default true,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  check (is_free = (stripe_price_id is null))
);
create unique index plans_free_key on plans (is_free) where is_free;
create trigger plans_updated_at before update on plans
  for each row execute function set_updated_at();
insert into plans (name, monthly_credits, price, storage_quota_bytes, is_free)
values ('Free', 100, 0, 1073741824, true);

create table subscriptions (
  tenant_id uuid primary key references tenants (id) on delete cascade,
  plan_id uuid not null references plans (id),
  status text not null check (status in ('trialing', 'active', 'past_due', 'canceled', 'incomplete')),
  stripe_customer_id text,
  stripe_subscription_id text unique,
  current_period_start timestamptz,
  current_period_end timestamptz,
  cancel_at_period_end boolean not null default false,
  canceled_at timestamptz,
  -- The newest Stripe event applied: an older one arriving later changes nothing.
  stripe_event_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create index subscriptions_customer_idx on subscriptions (stripe_customer_id);
create trigger subscriptions_updated_at before update on subscriptions
  for each row execute function set_updated_at();
