import { rmSync } from 'node:fs';
import pg from 'pg';
import type { EmbeddedPostgres } from '../../db/embedded.ts';
import { clusterInfo } from './cluster.ts';

export default async function globalTeardown(): Promise<void> {
  if (process.env.TEST_OPENAPI_DOCUMENT) rmSync(process.env.TEST_OPENAPI_DOCUMENT, { force: true });
  const cluster = (globalThis as { testCluster?: { server: EmbeddedPostgres; dir: string } }).testCluster;
  if (cluster) {
    await cluster.server.stop();
    rmSync(cluster.dir, { recursive: true, force: true });
    return;
  }
  // A shared server (TEST_DATABASE_URL) keeps running: remove what this run made.
  const { adminUrl, prefix } = clusterInfo();
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  const { rows } = await client.query<{ datname: string }>(
    'select datname from pg_database where starts_with(datname, $1)',
    [prefix],
  );
  for (const { datname } of rows)
    await client.query(`drop database if exists ${client.escapeIdentifier(datname)} with (force)`);
  await client.end();
}
