// Which failures mean the database cannot be reached (answered 503 with
// Retry-After, retried by jobs), told apart from the errors of a database
// that answers.
import net from 'node:net';
import pg from 'pg';
import {
  BackendTerminatedError,
  ConnectionError,
  StatementCancelledError,
  UniqueIntegrityConstraintViolationError,
} from 'slonik';
import { isDatabaseUnavailable } from '../../core/errors.ts';

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

it('knows a server that is stopping, starting or refusing connections', () => {
  for (const code of ['57P01', '57P02', '57P03', '08006', '08001', '53300', 'ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT'])
    expect([code, isDatabaseUnavailable(withCode(code))]).toEqual([code, true]);
});

it('knows the error of a real connection refused, and slonik’s wrapping of it', async () => {
  const server = net.createServer().listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  const refused = await new pg.Client({ host: '127.0.0.1', port }).connect().then(
    () => new Error('connected'),
    (error: Error) => error,
  );
  expect(isDatabaseUnavailable(refused)).toBe(true);
  expect(isDatabaseUnavailable(new ConnectionError(refused.message, { cause: refused }))).toBe(true);
});

it('knows a lost or unobtainable connection by what node-postgres and slonik say of it', () => {
  expect(isDatabaseUnavailable(new Error('Connection terminated unexpectedly'))).toBe(true);
  expect(isDatabaseUnavailable(new Error('Connection terminated due to connection timeout'))).toBe(true);
  expect(isDatabaseUnavailable(new Error('timeout exceeded when trying to connect'))).toBe(true);
  expect(isDatabaseUnavailable(new Error('Client has encountered a connection error and is not queryable'))).toBe(true);
  expect(isDatabaseUnavailable(new BackendTerminatedError(withCode('57P01')))).toBe(true);
  expect(isDatabaseUnavailable(new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')]))).toBe(true);
});

it('leaves alone the errors of a database that answers', () => {
  expect(isDatabaseUnavailable(new StatementCancelledError(withCode('57014')))).toBe(false);
  expect(
    isDatabaseUnavailable(new UniqueIntegrityConstraintViolationError(withCode('23505', 'duplicate key') as never)),
  ).toBe(false);
  expect(isDatabaseUnavailable(new Error('secret connection string postgres://user:hunter2@db'))).toBe(false);
  expect(isDatabaseUnavailable('Connection terminated')).toBe(false);
  expect(isDatabaseUnavailable(undefined)).toBe(false);
});
