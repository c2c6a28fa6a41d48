// Waiting for a job (core/jobs/events.ts): woken by the job's notifications,
// its first check made a moment after the wait listened when the caller asks.
import pg from 'pg';
import { JobEvents } from '../../core/jobs/events.ts';
import { createLogger } from '../../core/logger.ts';
import { Notifications } from '../../core/notifications.ts';
import { createTestDatabase, type TestDatabase } from '../helpers/database.ts';

let database: TestDatabase;
let notifications: Notifications;
let events: JobEvents;
let sender: pg.Client;
beforeAll(async () => {
  database = await createTestDatabase({ empty: true });
  notifications = new Notifications(database.url, createLogger('silent'));
  events = new JobEvents(notifications);
  sender = new pg.Client({ connectionString: database.url });
  await sender.connect();
});
afterAll(async () => {
  await sender.end();
  await notifications.close();
  await database.drop();
});

const jobId = '7d1c2d6e-0f5e-4a43-9e55-2f6f1d3f6a01';
const changed = (status: string) =>
  sender.query(`select pg_notify('job_events', $1)`, [JSON.stringify({ id: jobId, status })]);

/** A wait whose every check answers `answer`; when each check came, in ms from the wait's start. */
async function timedWait(answer: boolean, ms: number, firstCheckMs?: number) {
  const checks: number[] = [];
  const began = performance.now();
  const check = async () => {
    checks.push(performance.now() - began);
    return answer;
  };
  const held = await events.waitUntil(jobId, check, ms, undefined, firstCheckMs);
  return { held, checks };
}

it('makes its first check after the pause asked for, and finds a change made before it listened', async () => {
  const { held, checks } = await timedWait(true, 30_000, 50);
  expect(held).toBe(true);
  expect(checks).toHaveLength(1);
  expect(checks[0]).toBeGreaterThanOrEqual(49);
  // Not at the wait's end: found by that first check.
  expect(checks[0]).toBeLessThan(20_000);
});

it('checks at once when the job changes during the pause', async () => {
  let status = 'queued';
  const began = performance.now();
  const waiting = events.waitUntil(jobId, async () => status === 'succeeded', 30_000, undefined, 25_000);
  await new Promise((resolve) => setTimeout(resolve, 100));
  status = 'succeeded';
  await changed('succeeded');
  expect(await waiting).toBe(true);
  expect(performance.now() - began).toBeLessThan(20_000);
});

it('checks at once without a pause, again at the end, and answers false when the time runs out', async () => {
  const { held, checks } = await timedWait(false, 200);
  expect(held).toBe(false);
  // A timer may fire a moment before the deadline's millisecond: then one more short wait and check.
  expect(checks.length).toBeGreaterThanOrEqual(2);
  expect(checks[0]).toBeLessThan(checks[1]! - 100);
  expect(checks.at(-1)).toBeGreaterThanOrEqual(199);
});
