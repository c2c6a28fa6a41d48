-- Placeholder: number 0023 is taken by another branch (posts jobs / search), whose
-- file replaces this one when the branches merge. Migration numbers run without
-- gaps (db/migrations.ts), so 0025 needs something here until then.
select 1;
