// A bench section that runs its own worker needs a database of its own on
// the same server, so that `npm start`'s worker does not take its jobs:
// created, migrated, handed over with a configuration for a worker of
// `concurrency` (as many per tenant), and dropped afterwards whatever happens.
import pg from 'pg';
import { loadConfig, type Config } from '../core/config.ts';
import { migrate } from '../db/migrate.ts';

/** The configuration's environment: a worker of `concurrency` slots (as many per tenant) on the database. */
export const workerEnv = (databaseUrl: string, concurrency: number) => ({
  NODE_ENV: 'production',
  JWT_SECRET: 'x'.repeat(32),
  DATABASE_URL: databaseUrl,
  LOG_LEVEL: 'silent',
  WORKER_CONCURRENCY: String(concurrency),
  JOB_TENANT_CONCURRENCY: String(concurrency),
});

export async function withOwnDatabase<T>(
  adminUrl: string,
  prefix: string,
  concurrency: number,
  work: (databaseUrl: string, config: Config) => Promise<T>,
): Promise<T> {
  const name = `${prefix}_${Date.now()}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  await admin.query(`create database ${name}`);
  const databaseUrl = Object.assign(new URL(adminUrl), { pathname: `/${name}` }).toString();
  try {
    await migrate(databaseUrl);
    const config = loadConfig(workerEnv(databaseUrl, concurrency));
    return await work(databaseUrl, config);
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}
