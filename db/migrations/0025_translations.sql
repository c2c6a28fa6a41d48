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

-- The localized fields of an item, {field: value}: the one statement of which
-- fields a kind localizes (core/translations/ reads them through these).
-- Elements: the type's top-level fields marked localized.
create function element_localized(e content_elements) returns jsonb language sql stable
return (select coalesce(jsonb_object_agg(f ->> 'id', coalesce(e.data -> (f ->> 'id'), 'null'::jsonb)), '{}')
        from content_types t, jsonb_array_elements(t.fields) f
        where t.id = e.type_id and (f ->> 'localized')::boolean);

create function page_localized(p pages) returns jsonb language sql immutable
return jsonb_build_object('title', p.title, 'slug', p.slug, 'seo.title', p.seo -> 'title',
  'seo.description', p.seo -> 'description');

create function post_localized(p posts) returns jsonb language sql immutable
return jsonb_build_object('title', p.title, 'slug', p.slug, 'excerpt', p.excerpt, 'body', p.body,
  'seo.title', p.seo -> 'title', 'seo.description', p.seo -> 'description');

create function media_localized(alt text, title text, caption text) returns jsonb language sql immutable
return jsonb_build_object('alt', alt, 'title', title, 'caption', caption);

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

-- Row triggers, for translations only (master_id set): a person's write
-- records the master's current values for the fields it touched.
create function element_translation_taken() returns trigger language plpgsql as $$
declare
  changed text[] := changed_fields(element_localized(new), case when tg_op = 'UPDATE' then element_localized(old) end);
begin
  if cardinality(changed) > 0 then
    perform record_taken(new.id, 'elements', new.tenant_id, new.site_id,
      (select translation_hashes(element_localized(m)) from content_elements m where m.id = new.master_id), changed, 'person');
  end if;
  return null;
end $$;
create trigger content_elements_translation_taken after insert or update of data on content_elements
  for each row when (new.master_id is not null) execute function element_translation_taken();

create function page_translation_taken() returns trigger language plpgsql as $$
declare
  changed text[] := changed_fields(page_localized(new), case when tg_op = 'UPDATE' then page_localized(old) end);
begin
  if cardinality(changed) > 0 then
    perform record_taken(new.id, 'pages', new.tenant_id, new.site_id,
      (select translation_hashes(page_localized(m)) from pages m where m.id = new.master_id), changed, 'person');
  end if;
  return null;
end $$;
create trigger pages_translation_taken after insert or update of title, slug, seo on pages
  for each row when (new.master_id is not null) execute function page_translation_taken();

create function post_translation_taken() returns trigger language plpgsql as $$
declare
  changed text[] := changed_fields(post_localized(new), case when tg_op = 'UPDATE' then post_localized(old) end);
begin
  if cardinality(changed) > 0 then
    perform record_taken(new.id, 'posts', new.tenant_id, new.site_id,
      (select translation_hashes(post_localized(m)) from posts m where m.id = new.master_id), changed, 'person');
  end if;
  return null;
end $$;
create trigger posts_translation_taken after insert or update of title, slug, excerpt, body, seo on posts
  for each row when (new.master_id is not null) execute function post_translation_taken();

create function media_translation_taken() returns trigger language plpgsql as $$
declare
  changed text[] := changed_fields(media_localized(new.alt, new.title, new.caption),
    case when tg_op = 'UPDATE' then media_localized(old.alt, old.title, old.caption) end);
begin
  if cardinality(changed) > 0 then
    perform record_taken(new.id, 'media', new.tenant_id, new.site_id,
      (select translation_hashes(media_localized(m.alt, m.title, m.caption)) from media_items m where m.id = new.media_id), changed, 'person');
  end if;
  return null;
end $$;
create trigger media_translations_taken after insert or update of alt, title, caption on media_translations
  for each row execute function media_translation_taken();
