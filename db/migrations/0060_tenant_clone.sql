-- Tenant clones that carry content (issue 41 item 5): core/cloning/content-copy.ts
-- copies a tenant's content in batches of insert ... select, each row's new id
-- derived from the clone and the old id (clone_id), so any statement can find
-- a row's copy — a parent page, a master, a referenced element — without a
-- mapping table, and a batch run twice inserts nothing new.

-- The copy's id of `old` in the clone `salt`: an md5 of both, with the
-- version (8, RFC 9562's custom one) and variant bits set so it is a valid UUID.
create function clone_id(salt uuid, old uuid) returns uuid
  language sql immutable parallel safe strict
  return (select (substr(h, 1, 12) || '8' || substr(h, 14, 3)
                  || substr('89ab', (get_byte(decode(substr(h, 17, 2), 'hex'), 0) & 3) + 1, 1)
                  || substr(h, 18))::uuid
          from md5(salt::text || old::text) as h);

-- `value` with every string that is a key of `ids` replaced by that key's
-- value, at any depth (objects, arrays): an element's reference and media ids,
-- wherever its type's fields nest them.
create function jsonb_replace_strings(value jsonb, ids jsonb) returns jsonb
  language plpgsql immutable parallel safe strict
as $$
begin
  if ids = '{}' then return value; end if;
  case jsonb_typeof(value)
    when 'string' then return coalesce(ids -> (value #>> '{}'), value);
    when 'object' then
      return coalesce((select jsonb_object_agg(key, jsonb_replace_strings(v, ids)) from jsonb_each(value) as e (key, v)), '{}');
    when 'array' then
      return coalesce((select jsonb_agg(jsonb_replace_strings(v, ids) order by n)
                       from jsonb_array_elements(value) with ordinality as e (v, n)), '[]');
    else return value;
  end case;
end $$;

-- A copied media item shares its stored files with the original until either
-- changes them: a file is removed only when no item, variant or version still
-- names its key (core/media/shared-files.ts). These find the other users of a key.
create index media_items_storage_key_idx on media_items (storage_key);
create index media_items_variant_keys_idx on media_items using gin (variants jsonb_path_ops);
create index media_versions_storage_key_idx on media_versions (storage_key);

-- Which of `keys` no media item, variant or earlier version of any tenant
-- names: the files that may go. Security definer, as a request acts for its
-- own tenant and must still see that a clone elsewhere uses the file.
create function media_keys_unused(keys text[]) returns setof text
  language sql stable security definer
  set search_path = public, pg_temp
as $$
  select key from unnest(keys) as key
  where not exists (select 1 from media_items i where i.storage_key = key)
    and not exists (select 1 from media_items i where i.variants @> jsonb_build_array(jsonb_build_object('key', key)))
    and not exists (select 1 from media_versions v where v.storage_key = key)
$$;
