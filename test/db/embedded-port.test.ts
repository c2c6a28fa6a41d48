// The embedded PostgreSQL keeps its port between starts (a client set up with
// its URL finds it again), and takes another when something else holds it.
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createLogger } from '../../core/logger.ts';
import { startEmbeddedPostgres } from '../../db/embedded.ts';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'embedded-port-'));
  // As root the cluster runs as the postgres user, who must enter the folder.
  chmodSync(dir, 0o755);
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const start = () => startEmbeddedPostgres({ dir, logger: createLogger('silent'), settings: { fsync: 'off' } });

it('listens on the port of its last start, or on another when that one is taken', async () => {
  const first = await start();
  await first.stop();
  expect(readFileSync(path.join(dir, 'postgres.port'), 'utf8').trim()).toBe(String(first.port));

  const again = await start();
  expect(again.port).toBe(first.port);
  expect(again.adminUrl).toBe(first.adminUrl);
  await again.stop();

  const squatter = net.createServer();
  await new Promise<void>((resolve) => squatter.listen(first.port, '127.0.0.1', resolve));
  try {
    const moved = await start();
    expect(moved.port).not.toBe(first.port);
    await moved.stop();
    expect(readFileSync(path.join(dir, 'postgres.port'), 'utf8').trim()).toBe(String(moved.port));
  } finally {
    await new Promise((resolve) => squatter.close(resolve));
  }
});
