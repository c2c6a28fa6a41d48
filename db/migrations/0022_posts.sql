-- Posts: a site's articles, each in one locale; a translation is a post of
-- its own with master_id (one per locale per master). The body is Markdown
-- as written, or HTML sanitised on the way in (core/posts/post-writes.ts).
-- A scheduled post publishes itself at scheduled_for (a job keyed by the
-- post, core/posts/schedule.ts).
create table posts (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid not null,
  title text not null check (length(title) between 1 and 300),
  slug text not null check (slug ~ '^[a-z0-9]+(-[a-z0-9]+)*$' and length(slug) <= 200),
  excerpt text not null default '' check (length(excerpt) <= 2000),
  body text not null default '' check (length(body) <= 1000000),
  body_format text not null default 'markdown' check (body_format in ('markdown', 'html')),
  locale text not null check (length(locale) between 2 and 35),
  -- A master's translations go with it.
  master_id uuid references posts (id) on delete cascade,
  status text not null default 'draft' check (status in ('draft', 'scheduled', 'published', 'archived')),
  published_at timestamptz,
  scheduled_for timestamptz,
  author_id uuid references users (id) on delete set null,
  tags text[] not null default '{}',
  categories text[] not null default '{}',
  -- SET NULL: a media item deleted with force leaves the post without its image.
  featured_media_id uuid references media_items (id) on delete set null,
  seo jsonb not null default '{}' check (jsonb_typeof(seo) = 'object'),
  -- Where the body came from: {url, kind (url, pdf), fetched_at, etag}, or null for a post written here.
  source jsonb check (source is null or jsonb_typeof(source) = 'object'),
  version integer not null default 1 check (version > 0),
  created_by uuid references users (id) on delete set null,
  updated_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  foreign key (site_id, tenant_id) references sites (id, tenant_id) on delete cascade,
  check (master_id is distinct from id),
  check ((status = 'scheduled') = (scheduled_for is not null)),
  check ((status = 'published') = (published_at is not null) or status = 'archived'),
  unique (site_id, locale, slug),
  unique nulls distinct (master_id, locale)
);
create index posts_site_idx on posts (site_id, created_at, id);
create index posts_published_idx on posts (site_id, published_at desc, id) where status = 'published';
create index posts_master_idx on posts (master_id) where master_id is not null;
-- A public read by slug, whatever the locale.
create index posts_slug_idx on posts (site_id, slug);
create index posts_tags_idx on posts using gin (tags);
create index posts_categories_idx on posts using gin (categories);
create index posts_media_idx on posts (featured_media_id) where featured_media_id is not null;
create trigger posts_updated_at before update on posts for each row execute function set_updated_at();

-- Public answers showing a post carry `post:<master id>`; lists `posts:<site>` (0011).
create function posts_changed() returns trigger language plpgsql as $$
begin
  if tg_op <> 'DELETE' then
    perform announce_content_tags(array(select distinct unnest(array['post:' || coalesce(r.master_id, r.id), 'posts:' || r.site_id]) from changed_new r));
  end if;
  if tg_op <> 'INSERT' then
    perform announce_content_tags(array(select distinct unnest(array['post:' || coalesce(r.master_id, r.id), 'posts:' || r.site_id]) from changed_old r));
  end if;
  return null;
end $$;
create trigger posts_content_ins after insert on posts referencing new table as changed_new
  for each statement execute function posts_changed();
create trigger posts_content_upd after update on posts referencing new table as changed_new old table as changed_old
  for each statement execute function posts_changed();
create trigger posts_content_del after delete on posts referencing old table as changed_old
  for each statement execute function posts_changed();
