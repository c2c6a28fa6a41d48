-- What changed in a site's search documents since a moment, for the API
-- processes that hold large sites' documents in memory
-- (core/search/memory/indexes.ts): each row carries the transaction that
-- last wrote it, and a deleted row leaves a removal behind. A process keeps
-- the snapshot its copy was read in, and asks for the rows written, and the
-- removals made, by transactions that snapshot did not see — so a write
-- committed late, after a later one, is not missed, as a timestamp
-- watermark would miss it.
alter table search_documents add column changed xid8 not null default pg_current_xact_id();
create index search_documents_changed_idx on search_documents (site_id, changed);

create function search_documents_touched() returns trigger language plpgsql as $$
begin
  new.changed := pg_current_xact_id();
  return new;
end $$;
create trigger search_documents_touch before update on search_documents
  for each row execute function search_documents_touched();

-- Kept a day (worker/tasks/maintenance__cleanup.ts): a process that has not
-- caught up for that long reads the site afresh.
create table search_removals (
  site_id uuid not null,
  kind text not null,
  item_id uuid not null,
  changed xid8 not null default pg_current_xact_id(),
  removed_at timestamptz not null default now()
);
create index search_removals_changed_idx on search_removals (site_id, changed);
create index search_removals_removed_at_idx on search_removals (removed_at);

create function search_documents_removed() returns trigger language plpgsql as $$
begin
  insert into search_removals (site_id, kind, item_id) select site_id, kind, item_id from doc_old;
  return null;
end $$;
create trigger search_documents_remove after delete on search_documents referencing old table as doc_old
  for each statement execute function search_documents_removed();
