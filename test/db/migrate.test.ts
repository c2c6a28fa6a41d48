// Migrations: applied in order, once each, recorded with a checksum; an edited
// or unknown migration stops everything; a failing one leaves no trace.
import pg from 'pg';
import { migrate, MigrationError } from '../../db/migrate.ts';
import { readMigrationFiles, type MigrationFile } from '../../db/migrations.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
beforeEach(async () => {
  database = await createTestDatabase({ empty: true });
});
afterEach(() => database.drop());

async function query<T extends pg.QueryResultRow>(text: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  try {
    return (await client.query<T>(text)).rows;
  } finally {
    await client.end();
  }
}

const files = readMigrationFiles();
// The number after the last file's: numbers may have gaps, so not the count of files plus one.
const nextId = files.at(-1)!.id + 1;
const extra = (id: number, sql: string, name = `${String(id).padStart(4, '0')}_extra.sql`): MigrationFile => ({
  id,
  name,
  sql,
  checksum: `sum-${sql}`,
});

it('applies every file in order, with checksums, and graphile-worker’s schema', async () => {
  const report = await migrate(database.url);
  expect(report.applied).toEqual(files.map((file) => file.name));
  const rows = await query<{ id: number; checksum: string }>('select id, checksum from schema_migrations order by id');
  expect(rows).toEqual(files.map((file) => ({ id: file.id, checksum: file.checksum })));
  const [worker] = await query<{ exists: boolean }>(
    "select to_regprocedure('graphile_worker.add_job(text,json,text,timestamptz,integer,text,integer,text[],text)') is not null as exists",
  );
  expect(worker?.exists).toBe(true);
  const tables = await query<{ name: string }>(
    "select tablename as name from pg_tables where schemaname = 'public' order by 1",
  );
  expect(tables.map((table) => table.name)).toEqual(
    expect.arrayContaining(['tenants', 'users', 'memberships', 'sites', 'site_users']),
  );
});

it('applies nothing the second time', async () => {
  await migrate(database.url);
  const again = await migrate(database.url);
  expect(again).toEqual({ applied: [], alreadyApplied: files.length });
});

it('is safe when two processes migrate at once', async () => {
  const reports = await Promise.all([migrate(database.url), migrate(database.url)]);
  expect(reports.flatMap((report) => report.applied).sort()).toEqual(files.map((file) => file.name).sort());
});

it('refuses to run when an applied migration was edited', async () => {
  await migrate(database.url);
  const edited = files.map((file, index) =>
    index === 0 ? { ...file, sql: `${file.sql}\n-- edited`, checksum: 'different' } : file,
  );
  await expect(migrate(database.url, { files: edited })).rejects.toThrow(MigrationError);
  await expect(migrate(database.url, { files: edited })).rejects.toThrow(
    /0001_identity\.sql was changed after it was applied/,
  );
});

it('refuses a database with a migration this code does not know', async () => {
  await migrate(database.url, { files: [...files, extra(nextId, 'select 1')] });
  await expect(migrate(database.url)).rejects.toThrow(/which this code does not have/);
});

it('rolls a failing migration back completely and does not record it', async () => {
  await migrate(database.url);
  const failing = extra(nextId, 'create table half_done (id int); select * from no_such_table;');
  await expect(migrate(database.url, { files: [...files, failing] })).rejects.toThrow(`${failing.name} failed`);
  const [state] = await query<{ table: string | null; recorded: number }>(
    `select to_regclass('half_done')::text as table, (select count(*)::int from schema_migrations where id = ${failing.id}) as recorded`,
  );
  expect(state).toEqual({ table: null, recorded: 0 });
});

it('insists on numbered files, each number once', () => {
  const ids = files.map((file) => file.id);
  expect(ids).toEqual([...new Set(ids)].sort((x, y) => x - y));
});
