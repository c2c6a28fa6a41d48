-- Content webhooks (issue 41): a tenant's subscriptions to what happens to
-- its published content, the events the database records whoever makes the
-- change, and their deliveries, made by the job webhooks' machinery
-- (core/webhooks/: the tenant's secret, Standard Webhooks signatures, the
-- SSRF-safe sender, the retry schedule, the delivery log, the stranded sweep).

-- A subscription: where to POST which events, for all the tenant's sites or one.
create table content_webhooks (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid,
  url text not null check (length(url) <= 2000),
  events text[] not null check (cardinality(events) > 0),
  enabled boolean not null default true,
  description text not null default '' check (length(description) <= 500),
  created_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (site_id, tenant_id) references sites (id, tenant_id) on delete cascade
);
create index content_webhooks_tenant_idx on content_webhooks (tenant_id, created_at, id);

-- What happened, one row per item and kind of change, in the order the ids
-- give. Recorded by the triggers below only while the tenant has an enabled
-- subscription; turned into deliveries (fanned out) by the queue task
-- content_webhooks__fan_out, which takes them away: a delivery keeps its
-- payload. A transaction that changes the same row twice makes one event
-- of a kind for it (content_events_once).
create table content_events (
  id bigserial primary key,
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid not null,
  type text not null,
  item_id uuid not null,
  data jsonb not null,
  xact_id xid8 not null default pg_current_xact_id(),
  occurred_at timestamptz not null default now()
);
create unique index content_events_once on content_events (xact_id, item_id, type);
create index content_events_tenant_idx on content_events (tenant_id, id);

-- Deliveries are job_webhooks rows, as a job's are: the table becomes the
-- platform's outbound delivery log. A content delivery names its
-- subscription, the event it carries and the item, so that a later delivery
-- of the same item waits for an earlier one still being retried.
alter table job_webhooks
  alter column job_id drop not null,
  add column subscription_id uuid references content_webhooks (id) on delete cascade,
  add column event_id bigint,
  add column item_id uuid,
  drop constraint job_webhooks_event_check,
  add constraint job_webhooks_event_check check (
    event in ('start', 'progress', 'completed') and job_id is not null and subscription_id is null
    or event ~ '^(element|page|post|media)\.[a-z]+$' and job_id is null and subscription_id is not null
       and event_id is not null and item_id is not null);
create unique index job_webhooks_content_once on job_webhooks (subscription_id, event_id) where subscription_id is not null;
create index job_webhooks_subscription_idx on job_webhooks (subscription_id, created_at, id) where subscription_id is not null;
create index job_webhooks_item_pending_idx on job_webhooks (subscription_id, item_id, event_id) where status = 'pending' and subscription_id is not null;
-- The hourly cleanup (core/cleanup.ts) removes content deliveries that ended JOB_RETENTION_DAYS ago.
create index job_webhooks_content_ended_idx on job_webhooks (finished_at) where subscription_id is not null and status <> 'pending';

-- Records events and queues their fan-out, one queue entry per tenant,
-- folded into one that is already waiting (a bulk change is one entry). The
-- entry runs on the tenant's delivery lane (core/webhooks/announce.ts), so
-- deliveries leave in the order the events were recorded. A repeat within
-- a transaction keeps the first path a move started from.
-- Security definer: the subscriptions are read whatever tenant the
-- connection acts for (0034), and the queue is the worker's.
create function record_content_events(events jsonb) returns void language plpgsql security definer
set search_path = public, pg_temp as $$
declare
  touched uuid[];
begin
  with made as (
    insert into content_events as c (tenant_id, site_id, type, item_id, data)
    select (e->>'tenant_id')::uuid, (e->>'site_id')::uuid, e->>'type', (e->>'item_id')::uuid, e->'data'
    from jsonb_array_elements(events) e
    on conflict (xact_id, item_id, type) do update set data = case
      when excluded.type = 'page.moved' then excluded.data || jsonb_build_object(
        'previous_path', c.data->'previous_path',
        'paths', jsonb_build_array(c.data->'previous_path', excluded.data->'path'))
      else excluded.data end
    returning tenant_id
  )
  select array_agg(distinct tenant_id) into touched from made;
  if touched is null then return; end if;
  perform graphile_worker.add_job(
    identifier => 'content_webhooks__fan_out',
    payload => json_build_object('tenant_id', t),
    queue_name => 'webhooks:' || t,
    max_attempts => 5,
    job_key => 'content-events:' || t,
    job_key_mode => 'preserve_run_at')
  from unnest(touched) t;
end $$;

-- Whether any tenant among `tenants` listens: what a tenant without an
-- enabled subscription pays for a change is this one look.
create function content_webhooks_listen(tenants uuid[]) returns boolean language sql stable security definer
set search_path = public, pg_temp as $$
  select exists (select from content_webhooks w where w.enabled and w.tenant_id = any(tenants))
$$;

-- An event as record_content_events takes it.
create function content_event(tenant_id uuid, site_id uuid, type text, item_id uuid, data jsonb) returns jsonb
language sql immutable as $$
  select jsonb_build_object('tenant_id', tenant_id, 'site_id', site_id, 'type', type, 'item_id', item_id, 'data', data)
$$;

-- What happened to one row, per table: `o` as it was (null when inserted),
-- `n` as it is (null when deleted); one event per kind of change.

-- Elements: published (first, or its live name or data changed while
-- published; a draft saved beside it, 0058, is not live), unpublished,
-- deleted. Paths: the published pages placing it (a translation is placed
-- as its master).
create function element_event(type text, r content_elements) returns jsonb language sql stable as $$
  select content_event(r.tenant_id, r.site_id, type, r.id, jsonb_build_object(
    'id', r.id, 'master_id', r.master_id, 'site_id', r.site_id, 'type_id', r.type_id, 'locale', r.locale,
    'name', r.name, 'status', r.status,
    'paths', coalesce((select jsonb_agg(distinct p.path order by p.path) from page_elements pe
                       join pages p on p.id = pe.page_id and p.status = 'published'
                       where pe.element_id in (r.id, r.master_id)), '[]'),
    'surrogate_keys', jsonb_build_array('element:' || coalesce(r.master_id, r.id), 'type:' || r.type_id,
                                        'elements:' || r.site_id)))
$$;

create function element_events(o content_elements, n content_elements) returns setof jsonb language sql stable as $$
  select element_event(t.type, coalesce(n, o)) from (values
    ('element.published', n.status = 'published'
       and (o is null or o.status <> 'published' or (o.name, o.data) is distinct from (n.name, n.data))),
    ('element.unpublished', o.status = 'published' and n.status <> 'published'),
    ('element.deleted', n is null)
  ) t (type, happened) where t.happened
$$;

-- Pages: published (first, or its title, SEO or template changed while
-- published; its layout, below), moved (its path changed: a subtree moved
-- is one event per page), unpublished, deleted.
create function page_event(type text, r pages, previous_path text) returns jsonb language sql immutable as $$
  select content_event(r.tenant_id, r.site_id, type, r.id, jsonb_build_object(
    'id', r.id, 'master_id', r.master_id, 'site_id', r.site_id, 'parent_id', r.parent_id, 'locale', r.locale,
    'title', r.title, 'status', r.status, 'path', r.path, 'previous_path', previous_path,
    'paths', case when previous_path is null then jsonb_build_array(r.path) else jsonb_build_array(previous_path, r.path) end,
    'surrogate_keys', jsonb_build_array('page:' || coalesce(r.master_id, r.id), 'pages:' || r.site_id)))
$$;

create function page_events(o pages, n pages) returns setof jsonb language sql immutable as $$
  select page_event(t.type, coalesce(n, o), case when t.type = 'page.moved' then o.path end) from (values
    ('page.published', n.status = 'published'
       and (o is null or o.status <> 'published' or (o.title, o.seo, o.template) is distinct from (n.title, n.seo, n.template))),
    ('page.moved', o.path <> n.path),
    ('page.unpublished', o.status = 'published' and n.status <> 'published'),
    ('page.deleted', n is null)
  ) t (type, happened) where t.happened
$$;

-- Posts: published (first, also when scheduled, or an edit of a published
-- post), unpublished, deleted.
create function post_event(type text, r posts) returns jsonb language sql immutable as $$
  select content_event(r.tenant_id, r.site_id, type, r.id, jsonb_build_object(
    'id', r.id, 'master_id', r.master_id, 'site_id', r.site_id, 'locale', r.locale, 'slug', r.slug,
    'title', r.title, 'status', r.status,
    'surrogate_keys', jsonb_build_array('post:' || coalesce(r.master_id, r.id), 'posts:' || r.site_id)))
$$;

create function post_events(o posts, n posts) returns setof jsonb language sql immutable as $$
  select post_event(t.type, coalesce(n, o)) from (values
    ('post.published', n.status = 'published'
       and (o is null or o.status <> 'published'
            or (o.title, o.slug, o.excerpt, o.body, o.body_format, o.tags, o.categories, o.featured_media_id, o.seo)
               is distinct from
               (n.title, n.slug, n.excerpt, n.body, n.body_format, n.tags, n.categories, n.featured_media_id, n.seo))),
    ('post.unpublished', o.status = 'published' and n.status <> 'published'),
    ('post.deleted', n is null)
  ) t (type, happened) where t.happened
$$;

-- Media: created, updated (its file, status or descriptions changed), deleted.
create function media_event(type text, r media_items) returns jsonb language sql immutable as $$
  select content_event(r.tenant_id, r.site_id, type, r.id, jsonb_build_object(
    'id', r.id, 'site_id', r.site_id, 'locale', null, 'kind', r.kind, 'mime_type', r.mime_type, 'status', r.status,
    'version', r.version, 'surrogate_keys', jsonb_build_array('media:' || r.id)))
$$;

create function media_events(o media_items, n media_items) returns setof jsonb language sql immutable as $$
  select media_event(t.type, coalesce(n, o)) from (values
    ('media.created', o is null),
    ('media.updated', (o.version, o.status, o.alt, o.title, o.caption, o.tags, o.focal_point)
                      is distinct from (n.version, n.status, n.alt, n.title, n.caption, n.tags, n.focal_point)
                      -- (not `o is not null`: for a row, that means no column is null)
                      and not (o is null or n is null)),
    ('media.deleted', n is null)
  ) t (type, happened) where t.happened
$$;

-- One trigger function for the four tables: the statement's rows, old and
-- new side by side, through the table's function above (the trigger's
-- argument). Dynamic, since a statement's transition tables are named only
-- for its operation (an insert has no old rows). A tenant without an
-- enabled subscription stops at the first look.
create function content_item_events() returns trigger language plpgsql as $$
declare
  listening boolean;
  events jsonb;
begin
  execute format('select content_webhooks_listen(array(select distinct tenant_id from %I))',
                 case tg_op when 'DELETE' then 'changed_old' else 'changed_new' end)
  into listening;
  if not listening then return null; end if;
  execute format(case tg_op
      when 'INSERT' then 'select jsonb_agg(e) from changed_new n, %1$I(null, n) e'
      when 'UPDATE' then 'select jsonb_agg(e) from changed_old o join changed_new n using (id), %1$I(o, n) e'
      else 'select jsonb_agg(e) from changed_old o, %1$I(o, null) e' end, tg_argv[0])
  into events;
  if events is not null then perform record_content_events(events); end if;
  return null;
end $$;

-- A published page whose layout changed (an element placed, moved or
-- taken away) is published anew: what it shows changed. Its slots have no
-- tenant of their own: the pages say whose they are.
create function page_elements_events() returns trigger language plpgsql as $$
declare
  pages_changed text := case tg_op
    when 'INSERT' then 'select page_id from changed_new'
    when 'UPDATE' then 'select page_id from changed_old union select page_id from changed_new'
    else 'select page_id from changed_old' end;
  tenants uuid[];
  events jsonb;
begin
  execute format('select array_agg(distinct p.tenant_id) from pages p where p.id in (%s)', pages_changed) into tenants;
  if not content_webhooks_listen(tenants) then return null; end if;
  execute format('select jsonb_agg(page_event(%L, p, null)) from pages p where p.status = %L and p.id in (%s)',
                 'page.published', 'published', pages_changed)
  into events;
  if events is not null then perform record_content_events(events); end if;
  return null;
end $$;

create trigger page_elements_events_ins after insert on page_elements referencing new table as changed_new
  for each statement execute function page_elements_events();
create trigger page_elements_events_upd after update on page_elements
  referencing new table as changed_new old table as changed_old for each statement execute function page_elements_events();
create trigger page_elements_events_del after delete on page_elements referencing old table as changed_old
  for each statement execute function page_elements_events();

-- As 0011: one trigger per operation, each naming the transition tables it has.
do $$
declare
  spec record;
begin
  for spec in select * from (values
    ('content_elements', 'element_events'),
    ('pages', 'page_events'),
    ('posts', 'post_events'),
    ('media_items', 'media_events')) as s (tab, fn)
  loop
    execute format('create trigger %I after insert on %I referencing new table as changed_new
      for each statement execute function content_item_events(%L)', spec.tab || '_events_ins', spec.tab, spec.fn);
    execute format('create trigger %I after update on %I referencing new table as changed_new old table as changed_old
      for each statement execute function content_item_events(%L)', spec.tab || '_events_upd', spec.tab, spec.fn);
    execute format('create trigger %I after delete on %I referencing old table as changed_old
      for each statement execute function content_item_events(%L)', spec.tab || '_events_del', spec.tab, spec.fn);
  end loop;
end $$;

-- As 0034.
alter table content_webhooks enable row level security;
create policy tenant_isolation on content_webhooks
using (
  (select current_setting('app.tenant_id', true)) = '*'
  or tenant_id = (select nullif(nullif(current_setting('app.tenant_id', true), '*'), '')::uuid)
);
alter table content_events enable row level security;
create policy tenant_isolation on content_events
using (
  (select current_setting('app.tenant_id', true)) = '*'
  or tenant_id = (select nullif(nullif(current_setting('app.tenant_id', true), '*'), '')::uuid)
);
