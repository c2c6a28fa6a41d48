// Timestamps leave the database as ISO 8601 strings in UTC that keep
// PostgreSQL's microseconds, so a value read and sent back (a pagination
// cursor) compares equal to the stored one.
import { z } from 'zod';
import { createPool, sql, type DatabasePool } from '../../db/pool.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let pool: DatabasePool;
beforeAll(async () => {
  database = await createTestDatabase({ empty: true });
  pool = await createPool(database.url);
});
afterAll(async () => {
  await pool.end();
  await database.drop();
});

const read = (text: string, zone = 'UTC') =>
  pool.transaction(async (tx) => {
    await tx.query(sql.unsafe`select set_config('TimeZone', ${zone}, true)`);
    return tx.oneFirst(sql.type(z.object({ t: z.string() }))`select ${text}::timestamptz as t`);
  });

it.each([
  ['2026-01-01 00:00:00+00', '2026-01-01T00:00:00.000Z'],
  ['2026-01-01 00:00:00.1+00', '2026-01-01T00:00:00.100Z'],
  ['2026-01-01 00:00:00.123+00', '2026-01-01T00:00:00.123Z'],
  ['2026-01-01 00:00:00.1234+00', '2026-01-01T00:00:00.123400Z'],
  ['2026-01-01 00:00:00.045013+00', '2026-01-01T00:00:00.045013Z'],
  ['2026-06-30 23:59:59.999999+02', '2026-06-30T21:59:59.999999Z'],
])('reads %s as %s', async (text, iso) => {
  expect(await read(text)).toBe(iso);
});

it('gives the same text whatever the session’s time zone', async () => {
  expect(await read('2026-06-30 23:59:59.045013+00', 'Europe/Paris')).toBe('2026-06-30T23:59:59.045013Z');
  expect(await read('2026-01-01 00:00:00.1+00', 'America/Sao_Paulo')).toBe('2026-01-01T00:00:00.100Z');
});
