// The canceller stops a running statement from its own connection, and a
// close leaves no connection behind, even with cancels still waiting their
// turn (a process that shut down mid-cancel used to stay alive on it).
import pg from 'pg';
import { BackendCanceller } from '../../db/canceller.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';
import { pollUntil } from '../helpers/poll.ts';

let database: TestDatabase;
let observer: pg.Client;
beforeAll(async () => {
  database = await createTestDatabase({ empty: true });
  observer = new pg.Client({ connectionString: database.url });
  await observer.connect();
});
afterAll(async () => {
  await observer.end();
  await database.drop();
});

const cancellerConnections = async () =>
  (
    await observer.query<{ count: number }>(
      `select count(*)::int as count from pg_stat_activity
        where datname = current_database() and application_name = 'statement-canceller'`,
    )
  ).rows[0]!.count;

it('cancels the statement a backend is running', async () => {
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  const canceller = new BackendCanceller(database.url);
  try {
    const pid = (await client.query<{ pid: number }>('select pg_backend_pid() as pid')).rows[0]!.pid;
    const sleeping = client.query('select pg_sleep(30)').then(
      () => 'finished',
      (error: { code?: string }) => error.code,
    );
    // Wait until the sleep is running, so the cancel has something to stop.
    await pollUntil(
      async () =>
        (await observer.query<{ state: string }>('select state from pg_stat_activity where pid = $1', [pid])).rows[0]
          ?.state,
      (state) => state === 'active',
      { tries: 100 },
    );
    await canceller.cancel(pid);
    expect(await sleeping).toBe('57014');
  } finally {
    await canceller.close();
    await client.end();
  }
});

it('closes with cancels still queued, leaving no connection open', async () => {
  const canceller = new BackendCanceller(database.url);
  // Queued behind one another; the close comes while the first is still connecting.
  const cancels = [canceller.cancel(2_000_000), canceller.cancel(2_000_001), canceller.cancel(2_000_002)];
  await canceller.close();
  await Promise.all(cancels);
  // A backend's exit is asynchronous to the client's: give it a moment to leave pg_stat_activity.
  expect(await pollUntil(cancellerConnections, (open) => open === 0)).toBe(0);
});

it('does nothing once closed', async () => {
  const canceller = new BackendCanceller(database.url);
  await canceller.close();
  await canceller.cancel(2_000_000);
  expect(await cancellerConnections()).toBe(0);
});
