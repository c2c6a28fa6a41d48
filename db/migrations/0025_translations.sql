-- Translations (core/translations/): which master value each translated
-- field was taken from, so that a master edit shows as a stale field in each
-- of its translations; and the translations of a media item's text.
--
-- A translation "takes" a localized field of its master when the translate
-- job writes it (machine or copy) or when a person writes it (a PATCH, or a
-- POST with master_id): the person has the master's current text in front of
-- them. What is recorded is a hash of the master's value at that moment; the
-- field is stale once the master's value hashes differently. Person edits are
-- recorded by the triggers below, so every write path counts (the PATCH
-- endpoints know nothing of translations); the job writes its own record
-- after its write, in the same transaction, with the hash of the text it
-- actually translated.

-- Media items have no locale: the master is the item (in the site's default
-- locale), and a translation is its alt, title and caption in another locale.
-- The file, kind, tags and focal point are the item's, never translated.
create table media_translations (
  id uuid primary key default gen_random_uuid(),
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid not null references sites (id) on delete cascade,
  media_id uuid not null references media_items (id) on delete cascade,
  locale text not null check (length(locale) between 2 and 35),
  alt text not null default '' check (length(alt) <= 1000),
  title text not null default '' check (length(title) <= 300),
  caption text not null default '' check (length(caption) <= 2000),
  created_by uuid references users (id) on delete set null,
  updated_by uuid references users (id) on delete set null,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now(),
  unique (media_id, locale)
);
create trigger media_translations_updated_at before update on media_translations
  for each row execute function set_updated_at();

-- One row per translation (an element, page, post or media translation:
-- UUIDs do not collide across tables, so the id alone is the key). The
-- generated columns carry one foreign key per kind, so a translation's
-- record goes with it.
create table translation_states (
  translation_id uuid primary key,
  kind text not null check (kind in ('elements', 'media', 'pages', 'posts')),
  tenant_id uuid not null references tenants (id) on delete cascade,
  site_id uuid not null references sites (id) on delete cascade,
  -- {field: {hash, source (machine, copy, person), taken_at}}
  fields jsonb not null default '{}' check (jsonb_typeof(fields) = 'object'),
  element_id uuid generated always as (case when kind = 'elements' then translation_id end) stored
    references content_elements (id) on delete cascade,
  page_id uuid generated always as (case when kind = 'pages' then translation_id end) stored
    references pages (id) on delete cascade,
  post_id uuid generated always as (case when kind = 'posts' then translation_id end) stored
    references posts (id) on delete cascade,
  media_translation_id uuid generated always as (case when kind = 'media' then translation_id end) stored
    references media_translations (id) on delete cascade
);
create index translation_states_element_idx on translation_states (element_id) where element_id is not null;
create index translation_states_page_idx on translation_states (page_id) where page_id is not null;
create index translation_states_post_idx on translation_states (post_id) where post_id is not null;
create index translation_states_media_idx on translation_states (media_translation_id) where media_translation_id is not null;

-- A value's hash: jsonb's text form is canonical (keys ordered, spacing
-- fixed), so equal values hash equal; an absent value counts as null.
create function translation_hash(value jsonb) returns text language sql immutable parallel safe
return md5(coalesce(value, 'null'::jsonb)::text);

create function translation_hashes(fields jsonb) returns jsonb language sql immutable parallel safe
return coalesce((select jsonb_object_agg(f.key, translation_hash(f.value)) from jsonb_each(fields) f), '{}');

-- The localized fields of an item of a kind, {field: value}, from its row as
-- jsonb: the one statement of which fields each kind localizes (the triggers
-- below and core/translations/group.ts read them through it, so a hash
-- compared there is a hash recorded here). Elements: the type's top-level
-- fields marked localized.
create function translation_localized(kind text, item jsonb) returns jsonb language sql stable
return case kind
  when 'elements' then (
    select coalesce(jsonb_object_agg(f ->> 'id', coalesce(item -> 'data' -> (f ->> 'id'), 'null'::jsonb)), '{}')
    from content_types t, jsonb_array_elements(t.fields) f
    where t.id = (item ->> 'type_id')::uuid and (f ->> 'localized')::boolean)
  when 'pages' then jsonb_build_object('title', item -> 'title', 'slug', item -> 'slug',
    'seo.title', item -> 'seo' -> 'title', 'seo.description', item -> 'seo' -> 'description')
  when 'posts' then jsonb_build_object('title', item -> 'title', 'slug', item -> 'slug', 'excerpt', item -> 'excerpt',
    'body', item -> 'body', 'seo.title', item -> 'seo' -> 'title', 'seo.description', item -> 'seo' -> 'description')
  when 'media' then jsonb_build_object('alt', item -> 'alt', 'title', item -> 'title', 'caption', item -> 'caption')
  end;

-- Records that a translation took `fields` of its master (whose localized
-- values hash to `hashes`) from `source`, keeping what it recorded for the others.
create function record_taken(translation uuid, kind text, tenant uuid, site uuid, hashes jsonb, fields text[],
                             source text) returns void language sql as $$
  insert into translation_states as s (translation_id, kind, tenant_id, site_id, fields)
  select translation, kind, tenant, site, coalesce(jsonb_object_agg(f,
    jsonb_build_object('hash', hashes ->> f, 'source', source, 'taken_at', api_time(now()))), '{}')
  from unnest(fields) f
  on conflict (translation_id) do update set fields = s.fields || excluded.fields;
$$;

-- The fields a person's write filled or changed: on an insert those given a
-- value, on an update those whose value changed.
create function changed_fields(new_values jsonb, old_values jsonb) returns text[] language sql immutable
return array(select n.key from jsonb_each(new_values) n
             where n.value is distinct from old_values -> n.key
               and (old_values is not null or n.value not in ('null'::jsonb, '""'::jsonb)));

-- A person's write of a translation records the master's current values for
-- the fields it touched. One function for the four kinds; its arguments: the
-- kind, then the table and the column that name the master.
create function translation_taken() returns trigger language plpgsql as $$
declare
  kind text := tg_argv[0];
  changed text[] := changed_fields(translation_localized(kind, to_jsonb(new)),
    case when tg_op = 'UPDATE' then translation_localized(kind, to_jsonb(old)) end);
  master jsonb;
begin
  if cardinality(changed) > 0 then
    execute format('select to_jsonb(m) from %I m where m.id = $1', tg_argv[1]) into master
      using (to_jsonb(new) ->> tg_argv[2])::uuid;
    perform record_taken(new.id, kind, new.tenant_id, new.site_id,
      translation_hashes(translation_localized(kind, master)), changed, 'person');
  end if;
  return null;
end $$;

-- For translations only (master_id set), and only when a localized column may have changed.
create trigger content_elements_translation_taken after insert or update of data on content_elements
  for each row when (new.master_id is not null)
  execute function translation_taken('elements', 'content_elements', 'master_id');
create trigger pages_translation_taken after insert or update of title, slug, seo on pages
  for each row when (new.master_id is not null) execute function translation_taken('pages', 'pages', 'master_id');
create trigger posts_translation_taken after insert or update of title, slug, excerpt, body, seo on posts
  for each row when (new.master_id is not null) execute function translation_taken('posts', 'posts', 'master_id');
create trigger media_translations_taken after insert or update of alt, title, caption on media_translations
  for each row execute function translation_taken('media', 'media_items', 'media_id');
