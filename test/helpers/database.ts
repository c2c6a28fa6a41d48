// A fresh database per test file, cloned from the migrated template.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { clusterInfo, databaseUrl } from '../setup/cluster.ts';

export type TestDatabase = { name: string; url: string; drop(): Promise<void> };

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: clusterInfo().adminUrl });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** A database with every migration applied (or, with `empty`, none at all). */
export async function createTestDatabase(options: { empty?: boolean } = {}): Promise<TestDatabase> {
  const { adminUrl, template, prefix } = clusterInfo();
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  await admin((client) =>
    client.query(
      `create database ${client.escapeIdentifier(name)}${options.empty ? '' : ` template ${client.escapeIdentifier(template)}`}`,
    ),
  );
  return {
    name,
    url: databaseUrl(adminUrl, name),
    drop: () =>
      admin((client) => client.query(`drop database if exists ${client.escapeIdentifier(name)} with (force)`)).then(
        () => undefined,
      ),
  };
}
