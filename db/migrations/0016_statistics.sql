-- Request and view statistics. Each API process counts in memory and writes
-- what it counted once a minute (and when it stops): one row per minute,
-- site, route and status class, with a latency histogram in fixed buckets
-- (core/statistics/histogram.ts), so rows from many processes and minutes add
-- up to exact counts and percentiles that merge; and public views per item
-- and day.
create table request_stats (
  minute timestamptz not null,
  site_id uuid references sites (id) on delete cascade,
  -- The manifest key (METHOD /path with {params}), never the raw path.
  route text not null,
  status_class smallint not null check (status_class between 1 and 5),
  count integer not null check (count >= 0),
  duration_ms double precision not null default 0,
  buckets integer[] not null,
  constraint request_stats_key unique nulls not distinct (minute, site_id, route, status_class)
);
create index request_stats_site_idx on request_stats (site_id, minute);
create index request_stats_minute_idx on request_stats (minute);

create table view_stats (
  day date not null,
  site_id uuid not null references sites (id) on delete cascade,
  kind text not null check (kind in ('page', 'element', 'post', 'media')),
  item_id uuid not null,
  views integer not null check (views >= 0),
  primary key (site_id, day, kind, item_id)
);

-- Each process's last write, for the pipeline's health.
create table stats_flushes (
  process text primary key,
  flushed_at timestamptz not null,
  requests integer not null,
  views integer not null
);
