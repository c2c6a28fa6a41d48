// Once per run: a PostgreSQL server, and a template database migrated once
// that every test file clones (CREATE DATABASE … TEMPLATE is a file copy,
// far faster than migrating per file).
import { chmodSync, mkdtempSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createLogger } from '../../core/logger.ts';
import { startEmbeddedPostgres } from '../../db/embedded.ts';
import { migrate } from '../../db/migrate.ts';
import { buildTestDocument } from '../helpers/app.ts';
import { databaseUrl, runId } from './cluster.ts';

export default async function globalSetup(): Promise<void> {
  let adminUrl = process.env.TEST_DATABASE_URL;
  if (!adminUrl) {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'platform-test-'));
    // mkdtemp makes it private; as root the cluster runs as the postgres user, who must enter it.
    chmodSync(dir, 0o755);
    const server = await startEmbeddedPostgres({
      dir,
      logger: createLogger('warn'),
      // A throwaway cluster: durability only costs time here.
      settings: { fsync: 'off', synchronous_commit: 'off', full_page_writes: 'off', max_connections: '300' },
    });
    (globalThis as { testCluster?: unknown }).testCluster = { server, dir };
    adminUrl = server.adminUrl;
  }
  const prefix = `test_${runId}`;
  const template = `${prefix}_template`;
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  await client.query(`create database ${client.escapeIdentifier(template)}`);
  await client.end();
  await migrate(databaseUrl(adminUrl, template));
  // The whole app's OpenAPI document, built once for every test file's contract check (test/helpers/app.ts).
  const document = path.join(os.tmpdir(), `platform-test-${runId}-openapi.json`);
  writeFileSync(document, JSON.stringify(buildTestDocument()));
  process.env.TEST_OPENAPI_DOCUMENT = document;
  process.env.TEST_PG_ADMIN_URL = adminUrl;
  process.env.TEST_PG_TEMPLATE = template;
  process.env.TEST_PG_PREFIX = prefix;
}
