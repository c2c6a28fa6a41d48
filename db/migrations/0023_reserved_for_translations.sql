-- PLACEHOLDER, not a migration of this branch. Number 0023 belongs to the
-- translations branch (posts jobs took 0024, search 0025). The migrator
-- refuses gaps (db/migrations.ts), so this empty file holds the number until
-- that branch's 0023 is merged: then delete this file, keep theirs.
select 1;
