// The one-command start, as a user runs it: an embedded PostgreSQL under
// DATA_DIR, migrations, the bootstrap admin, API and worker in one process,
// a clean stop on SIGTERM, and a second start on the same data.
import { chmodSync, existsSync, mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { createTestDatabase } from './helpers/database.ts';
import { startProcess, stopProcess, untilReady } from './helpers/processes.ts';

describe('npm start without DATABASE_URL', () => {
  let dataDir: string;
  let databaseLine: string | undefined;
  beforeAll(() => {
    dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-start-'));
    chmodSync(dataDir, 0o755);
  });
  afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

  it('initialises, migrates, creates the admin, serves, and stops cleanly', async () => {
    const first = await startProcess('scripts/start.ts', { DATA_DIR: dataDir });
    expect((await untilReady(first.url)).status).toBe(200);
    const info = (await (await fetch(first.url)).json()) as { docs_url: string };
    expect(info.docs_url).toBe(`${first.url}/docs`);
    expect(first.output()).toContain('initialising embedded PostgreSQL');
    expect(first.output()).toContain('created the bootstrap admin with the local default credentials');
    expect(first.output()).toContain(`API documentation: ${first.url}/docs`);
    expect(first.output()).toContain(`Admin page:        ${first.url}/admin/ui/`);
    // The embedded database's URL, password and all, as `npm run admin -- database-url` prints it.
    databaseLine = /Database: +(postgres:\/\/postgres:[^@\s]+@127\.0\.0\.1:\d+\/app) \(embedded\)/.exec(
      first.output(),
    )?.[1];
    expect(databaseLine).toBeDefined();
    expect((await fetch(`${first.url}/docs`)).status).toBe(200);
    expect(await stopProcess(first)).toBe(0);
    expect(first.output()).toContain('worker stopped');
    // PostgreSQL was shut down too: its lock file is gone.
    expect(existsSync(path.join(dataDir, 'postgres', 'postmaster.pid'))).toBe(false);
  });

  it('starts again on the same data, and the database on the same port, without initialising or creating another admin', async () => {
    const second = await startProcess('scripts/start.ts', { DATA_DIR: dataDir });
    expect((await untilReady(second.url)).status).toBe(200);
    expect(second.output()).toContain(`Database:          ${databaseLine} (embedded)`);
    expect(second.output()).not.toContain('initialising embedded PostgreSQL');
    expect(second.output()).not.toContain('created the bootstrap admin');
    expect(await stopProcess(second, 'SIGINT')).toBe(0);
  });

  it('recovers the data folder after a run that was killed', async () => {
    const killed = await startProcess('scripts/start.ts', { DATA_DIR: dataDir });
    await untilReady(killed.url);
    await stopProcess(killed, 'SIGKILL');
    const next = await startProcess('scripts/start.ts', { DATA_DIR: dataDir });
    expect((await untilReady(next.url)).status).toBe(200);
    expect(next.output()).toContain('stopping the PostgreSQL left running by an earlier run that was killed');
    expect(await stopProcess(next)).toBe(0);
  });
});

describe('npm run api and npm run worker against DATABASE_URL', () => {
  it('serve and stop on SIGTERM', async () => {
    const database = await createTestDatabase();
    try {
      const api = await startProcess('api/main.ts', { DATABASE_URL: database.url });
      const worker = await startProcess('worker/main.ts', { DATABASE_URL: database.url }, { listens: false });
      expect((await untilReady(api.url)).status).toBe(200);
      // The worker beats on start, so /health turns ok once it runs.
      const deadline = Date.now() + 30_000;
      let health: { status?: string } = {};
      while (health.status !== 'ok' && Date.now() < deadline) {
        health = (await (await fetch(`${api.url}/health`)).json()) as { status?: string };
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      expect(health.status).toBe('ok');
      expect(await stopProcess(worker)).toBe(0);
      expect(await stopProcess(api)).toBe(0);
    } finally {
      await database.drop();
    }
  });
});
