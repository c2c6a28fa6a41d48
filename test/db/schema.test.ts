// db/schema.sql is the schema the migrations make: a fresh database (cloned
// from the template the run migrated) dumps to the same text, so a migration
// committed without `npm run schema` fails here, naming the first line apart.
import { readFileSync } from 'node:fs';
import pg from 'pg';
import { dumpSchema, schemaFile } from '../../db/schema-dump.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase();
});
afterAll(async () => {
  await database.drop();
});

// npm run schema writes the embedded PostgreSQL 18's text; a view's body read from
// PostgreSQL 15 (TEST_DATABASE_URL) names each column's table where 18 does not.
// Compared without those qualifiers, the file holds on either.
function comparable(schema: string): string[] {
  let inView = false;
  return schema.split('\n').map((line) => {
    if (line.startsWith('CREATE VIEW') || line.startsWith('CREATE MATERIALIZED VIEW')) inView = true;
    else if (line === '') inView = false;
    else if (inView) return line.replace(/\b(?!public\.)[a-z_][a-z0-9_]*\.(?=[a-z_"])/g, '');
    return line;
  });
}

/** Undefined when alike, else the first line apart with a little context. */
function firstDifference(expected: string, actual: string): string | undefined {
  const [want, got] = [comparable(expected), comparable(actual)];
  const at = want.findIndex((line, i) => line !== got[i]);
  const index = at === -1 ? (want.length === got.length ? -1 : want.length) : at;
  if (index === -1) return undefined;
  const show = (lines: string[]) => lines.slice(Math.max(0, index - 3), index + 3).join('\n');
  return `db/schema.sql differs from the migrated database at line ${index + 1}.\n--- db/schema.sql\n${show(want)}\n+++ migrated\n${show(got)}`;
}

it('db/schema.sql is the schema of a freshly migrated database (run npm run schema after a migration)', async () => {
  const difference = firstDifference(readFileSync(schemaFile, 'utf8'), await dumpSchema(database.url));
  if (difference) throw new Error(`${difference}\n\nRun \`npm run schema\` and commit db/schema.sql.`);
});

it('a migration that changes a column is seen', async () => {
  const before = await dumpSchema(database.url);
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  await client.query('alter table tenants alter column name type varchar(300)').finally(() => client.end());
  expect(firstDifference(before, await dumpSchema(database.url))).toContain('name character varying(300) NOT NULL');
});
