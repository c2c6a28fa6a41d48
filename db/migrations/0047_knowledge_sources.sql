-- Knowledge documents from a web page or a PDF, embeddings kept across
-- reindexing, and searches filtered by site, language and kind of source.
--
-- A document of kind url or pdf is made before its text exists: the first
-- run of its rag_index job fetches the page (or reads the uploaded PDF) with
-- the post importers' code and writes the text, then indexes it. Until then
-- `text_pending` is true and `body` is empty; the title (and, for a page,
-- the locale) not given by the caller are taken from the source then.
alter table knowledge_documents drop constraint knowledge_documents_kind_check;
alter table knowledge_documents
  add constraint knowledge_documents_kind_check check (kind in ('post', 'text', 'url', 'pdf')),
  -- url: the page (once fetched, where it ended up after redirects).
  add column source_url text check (length(source_url) <= 2000),
  -- pdf: the uploaded file's name, as a label.
  add column file_name text check (length(file_name) <= 255),
  add column text_pending boolean not null default false,
  add column title_from_source boolean not null default false,
  add column locale_from_source boolean not null default false,
  add constraint knowledge_documents_source_url_check1 check ((kind = 'url') = (source_url is not null)),
  add constraint knowledge_documents_file_name_check1 check ((kind = 'pdf') = (file_name is not null)),
  add constraint knowledge_documents_pending_check check (not text_pending or kind in ('url', 'pdf'));

-- Each chunk's embedding with the hash of what was embedded (the model and
-- the text sent: title and chunk), so that reindexing a changed document
-- embeds only the chunks whose text changed and keeps the stored vector of
-- the others (core/knowledge/indexing.ts). Chunks embedded before this
-- migration have none, and are embedded again the next time.
alter table knowledge_chunks add column embedding_hash text;

-- What a search may filter by, on the rows each half of it reads: the kind
-- of source on the chunks (full text; site and locale were there already)
-- and site, locale and kind on the signatures (the vector half scans only
-- those narrow rows).
alter table knowledge_chunks add column source_kind text;
update knowledge_chunks c set source_kind = d.kind from knowledge_documents d where d.id = c.document_id;
alter table knowledge_chunks alter column source_kind set not null;

alter table knowledge_signatures add column locale text, add column source_kind text;
update knowledge_signatures s set locale = c.locale, source_kind = c.source_kind
from knowledge_chunks c where c.id = s.chunk_id;
alter table knowledge_signatures alter column locale set not null, alter column source_kind set not null;
