// `npm run schema`: writes db/schema.sql, the schema of a database migrated from
// nothing (db/schema-dump.ts says what it holds and why it is not pg_dump's).
// Always on an embedded PostgreSQL started in a temporary folder (3 s): the
// script needs nothing but Node, and the file is that server version's text for
// everyone, whatever PostgreSQL a machine runs its tests on.
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createLogger } from '../core/logger.ts';
import { startEmbeddedPostgres } from '../db/embedded.ts';
import { migrate } from '../db/migrate.ts';
import { dumpSchema, schemaFile } from '../db/schema-dump.ts';

const dir = mkdtempSync(path.join(os.tmpdir(), 'platform-schema-'));
try {
  // As root the cluster runs as the postgres user, who must enter the folder mkdtemp made private.
  chmodSync(dir, 0o755);
  const server = await startEmbeddedPostgres({ dir, logger: createLogger('warn'), settings: { fsync: 'off' } });
  try {
    const client = new pg.Client({ connectionString: server.adminUrl });
    await client.connect();
    await client.query('create database schema').finally(() => client.end());
    await migrate(server.urlFor('schema'));
    writeFileSync(schemaFile, await dumpSchema(server.urlFor('schema')));
    process.stdout.write(`wrote ${path.relative(process.cwd(), schemaFile)}\n`);
  } finally {
    await server.stop();
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
