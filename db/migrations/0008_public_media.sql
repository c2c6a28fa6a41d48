-- Public delivery: a site is private until its administrators make it public;
-- then the public endpoints serve its ready media (and, later, its published
-- content) without a token.
alter table sites add column visibility text not null default 'private' check (visibility in ('private', 'public'));

-- Found by processing: a compact placeholder of an image (blurhash) and the
-- EXIF fields worth keeping (never the GPS position unless asked).
alter table media_items add column blurhash text check (length(blurhash) <= 100);
alter table media_items add column exif jsonb;
