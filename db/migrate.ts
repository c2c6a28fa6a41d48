// Applies the SQL migrations in order, each once, in its own transaction,
// then graphile-worker's own schema. Uses a plain pg client because migration
// files hold several statements, which only the simple query protocol allows.
import pg from 'pg';
import { Logger as WorkerLogger, runMigrations as runWorkerMigrations } from 'graphile-worker';
import { readMigrationFiles, type MigrationFile } from './migrations.ts';

export class MigrationError extends Error {
  override name = 'MigrationError';
}

// Any constant works; it only has to be the same in every process, so two
// processes starting together do not apply the same file twice.
const lockKey = 72_617_001;

export type MigrationReport = { applied: string[]; alreadyApplied: number };

export type MigrateOptions = { files?: MigrationFile[]; workerLogger?: WorkerLogger };

const silentWorkerLogger = new WorkerLogger(() => () => undefined);

export async function migrate(databaseUrl: string, options: MigrateOptions = {}): Promise<MigrationReport> {
  const files = options.files ?? readMigrationFiles();
  const client = new pg.Client({ connectionString: databaseUrl, application_name: 'migrate' });
  await client.connect();
  try {
    await client.query('select pg_advisory_lock($1)', [lockKey]);
    await client.query(`
      create table if not exists schema_migrations (
        id integer primary key,
        name text not null,
        checksum text not null,
        applied_at timestamptz not null default now()
      )`);
    const { rows } = await client.query<{ id: number; name: string; checksum: string }>(
      'select id, name, checksum from schema_migrations order by id',
    );
    verifyApplied(rows, files);
    const pending = files.filter((file) => !rows.some((row) => row.id === file.id));
    for (const file of pending) {
      try {
        await client.query('begin');
        await client.query(file.sql);
        await client.query('insert into schema_migrations (id, name, checksum) values ($1, $2, $3)', [
          file.id,
          file.name,
          file.checksum,
        ]);
        await client.query('commit');
      } catch (error) {
        await client.query('rollback');
        throw new MigrationError(`Migration ${file.name} failed: ${(error as Error).message}`, { cause: error });
      }
    }
    await runGraphileMigrations(databaseUrl, options.workerLogger ?? silentWorkerLogger);
    // The application role's access to graphile-worker's tables, which exist only now on a new database (0034).
    await client.query(`do $$ begin
      if to_regproc('public.app_user_graphile_worker_access') is not null then
        perform public.app_user_graphile_worker_access();
      end if; end $$`);
    return { applied: pending.map((file) => file.name), alreadyApplied: rows.length };
  } finally {
    await client.query('select pg_advisory_unlock($1)', [lockKey]).catch(() => undefined);
    await client.end();
  }
}

/**
 * graphile-worker's migrations on a pool of ours: given only a connection
 * string, it ends its own pool without waiting and removes its error handler
 * first, so a connection still closing when the database goes away (a test
 * dropping it) raised an unhandled error. Here the pool is ended and awaited.
 */
async function runGraphileMigrations(databaseUrl: string, logger: WorkerLogger): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1, application_name: 'migrate' });
  const ignore = () => undefined;
  pool.on('error', ignore);
  pool.on('connect', (client) => client.on('error', ignore));
  try {
    await runWorkerMigrations({ pgPool: pool, logger });
  } finally {
    await pool.end();
  }
}

/** Refuses a database whose history differs from the files: an edited or unknown migration. */
export function verifyApplied(applied: { id: number; name: string; checksum: string }[], files: MigrationFile[]): void {
  for (const row of applied) {
    const file = files.find((candidate) => candidate.id === row.id);
    if (!file) {
      throw new MigrationError(
        `The database has migration ${row.name}, which this code does not have: deploy the newer code, never an older one.`,
      );
    }
    if (file.checksum !== row.checksum) {
      throw new MigrationError(
        `Migration ${file.name} was changed after it was applied (checksum ${row.checksum.slice(0, 12)}… in the database, ${file.checksum.slice(0, 12)}… on disk). Migrations are forward-only: restore the file and add a new migration.`,
      );
    }
  }
}
