// Settings given in a connection URL's startup options (db/pool.ts
// withSetting): the session starts with them, beside those the URL named.
import pg from 'pg';
import { withSetting } from '../../db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
beforeAll(async () => {
  database = await createTestDatabase({ empty: true });
});
afterAll(() => database.drop());

async function settingsOf(url: string): Promise<Record<string, string>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ name: string; setting: string }>(
      `select name, setting from pg_settings where name in ('synchronous_commit', 'search_path', 'application_name')`,
    );
    return Object.fromEntries(rows.map((row) => [row.name, row.setting]));
  } finally {
    await client.end();
  }
}

it('starts the session with the setting', async () => {
  expect(await settingsOf(withSetting(database.url, 'synchronous_commit', 'off'))).toMatchObject({
    synchronous_commit: 'off',
  });
});

it('keeps the options the URL gave, and its other parameters', async () => {
  const given = new URL(database.url);
  given.searchParams.set('options', '-c search_path=elsewhere');
  given.searchParams.set('application_name', 'settings-test');
  const url = withSetting(withSetting(given.toString(), 'synchronous_commit', 'local'), 'statement_timeout', '5s');
  expect(await settingsOf(url)).toEqual({
    synchronous_commit: 'local',
    search_path: 'elsewhere',
    application_name: 'settings-test',
  });
});
