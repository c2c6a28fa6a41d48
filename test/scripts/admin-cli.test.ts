// The admin command line as an operator runs it (`npm run admin -- …`): a
// child process on the test database, configured by the environment alone.
// Each command's effect is read back through the HTTP API (or the database
// where no route shows it). A process takes about a second and a half to
// start, so independent commands run side by side.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import { startTestApp, stopTestApp, type TestApp } from '../helpers/app.ts';
import { createTestDatabase } from '../helpers/database.ts';
import { login, newUser, password, type Caller } from '../helpers/factories.ts';
import { globalAdmin, staffedTenant, type Staffed } from '../helpers/identity.ts';
import { newJob, readJob } from '../helpers/jobs.ts';

const root = path.join(import.meta.dirname, '..', '..');
const compileCache = path.join(os.tmpdir(), 'content-agent-platform-test-compile-cache');

type Ran = { code: number | null; stdout: string; stderr: string };

function admin(t: TestApp, args: string[], options: { env?: Record<string, string>; stdin?: string } = {}) {
  const child = spawn(process.execPath, ['scripts/admin.ts', ...args], {
    cwd: root,
    env: {
      PATH: process.env.PATH,
      NODE_COMPILE_CACHE: compileCache,
      NODE_ENV: 'test',
      LOG_LEVEL: 'silent',
      DATABASE_URL: t.database.url,
      DATA_DIR: t.config.dataDir,
      ...(process.env.TEST_DATABASE_APP_ROLE ? { DATABASE_APP_ROLE: process.env.TEST_DATABASE_APP_ROLE } : {}),
      ...options.env,
    },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(options.stdin ?? '');
  return new Promise<Ran>((resolve) => child.once('close', (code) => resolve({ code, stdout, stderr })));
}

const json = (ran: Ran) => {
  if (ran.code !== 0) throw new Error(`exit ${ran.code}: ${ran.stderr}`);
  return JSON.parse(ran.stdout) as Record<string, unknown>;
};

let t: TestApp;
let operator: Caller;
let a: Staffed;
beforeAll(async () => {
  t = await startTestApp();
  operator = await globalAdmin(t);
  a = await staffedTenant(t);
});
afterAll(() => stopTestApp(t));

describe('npm run admin', () => {
  it('explains itself, and refuses a bad call with exit 2 and no stack trace', async () => {
    const [help, commandHelp, unknown, badOption, badValue, none] = await Promise.all([
      admin(t, ['--help']),
      admin(t, ['jobs', '--help']),
      admin(t, ['frobnicate']),
      admin(t, ['jobs', '--colour', 'red']),
      admin(t, ['cancel', 'not-a-uuid']),
      admin(t, []),
    ]);
    expect(help.code).toBe(0);
    for (const command of ['create-admin', 'reset-password', 'grant-credits', 'jobs', 'retry', 'cancel', 'pause'])
      expect(help.stdout).toContain(command);
    expect(commandHelp.code).toBe(0);
    expect(commandHelp.stdout).toContain('--error-code CODE');
    expect(unknown).toMatchObject({ code: 2, stderr: expect.stringContaining('unknown command: frobnicate') });
    expect(badOption).toMatchObject({ code: 2, stderr: expect.stringContaining("Unknown option '--colour'") });
    expect(badValue).toMatchObject({ code: 2, stderr: expect.stringContaining('not a job id') });
    expect(none.code).toBe(2);
    for (const ran of [unknown, badOption, badValue]) expect(ran.stderr).not.toMatch(/\n\s+at /);
  });

  it('creates a global admin who signs in, and resets a password', async () => {
    const user = await newUser(t);
    const email = `cli-admin-${Date.now()}@example.com`;
    const [created, reset, taken] = await Promise.all([
      admin(t, ['create-admin', email, '--password-stdin', '--name', 'Ops', '--json'], {
        stdin: 'a long enough password\n',
      }),
      admin(t, ['reset-password', user.email, '--password', 'another long password']),
      admin(t, ['create-admin', operator.user.email, '--password', 'whatever long one']),
    ]);
    expect(json(created).user).toMatchObject({ email, full_name: 'Ops', is_global_admin: true });
    const tokens = await login(t, email, 'a long enough password');
    const me = await request(t.app).get('/admin/queue/pauses').auth(tokens.access_token, { type: 'bearer' });
    expect(me.status).toBe(200);

    expect(reset.code).toBe(0);
    expect(reset.stdout).toContain(`Password of ${user.email} reset`);
    await expect(login(t, user.email, password)).rejects.toThrow('401');
    await login(t, user.email, 'another long password');

    expect(taken).toMatchObject({ code: 1, stderr: expect.stringContaining('exists') });
  });

  it('makes the first admin of an empty installation as npm start does, with a generated password', async () => {
    const empty = await createTestDatabase();
    try {
      const ran = await admin(t, ['create-admin', 'first@example.com', '--name', 'First', '--json'], {
        env: { DATABASE_URL: empty.url },
      });
      const body = json(ran) as { user: unknown; password: string };
      expect(body.user).toMatchObject({ email: 'first@example.com', full_name: 'First', is_global_admin: true });
      expect(body.password).toMatch(/^[\w-]{20}$/);
    } finally {
      await empty.drop();
    }
  });

  it('grants credits to a tenant’s pool, by slug', async () => {
    const ran = await admin(t, ['grant-credits', a.tenant.slug, '750', '--reason', 'launch', '--json']);
    expect(json(ran)).toMatchObject({ tenant_id: a.tenant.id, pool: { balance: 750 } });
    const res = await request(t.app)
      .get(`/admin/global-cost-settings/tenant-credits/${a.tenant.id}`)
      .set(operator.auth);
    expect(res.body).toMatchObject({ pool: { balance: 750, available: 750 } });
  });

  it('lists jobs newest first with filters, retries a failed one and cancels a queued one', async () => {
    const failed = await newJob(t, a.site, { kind: 'speech', status: 'failed' });
    const queued = await newJob(t, a.site, { kind: 'speech', status: 'queued' });
    const finished = await newJob(t, a.site, { kind: 'speech', status: 'succeeded' });
    // The lists first: a retry running beside them could make the failed job queued before they read it.
    const [list, failures, text] = await Promise.all([
      admin(t, ['jobs', '--tenant', a.tenant.slug, '--total', '--json']),
      admin(t, ['jobs', '--status', 'failed', '--error-code', 'provider_rejected', '--site', a.site.slug, '--json']),
      admin(t, ['jobs', '--tenant', a.tenant.id, '--limit', '2']),
    ]);
    const [retried, canceled, notFailed] = await Promise.all([
      admin(t, ['retry', failed.id]),
      admin(t, ['cancel', queued.id]),
      admin(t, ['retry', finished.id]),
    ]);
    const listed = json(list) as { items: { id: string }[]; total: number };
    expect(listed.items.map((job) => job.id)).toEqual([finished.id, queued.id, failed.id]);
    expect(listed.total).toBe(3);
    expect((json(failures) as { items: { id: string }[] }).items.map((job) => job.id)).toEqual([failed.id]);
    expect(text.code).toBe(0);
    expect(text.stdout.split('\n')[0]).toContain(finished.id);
    expect(text.stdout).toContain('Next page: --cursor ');

    expect(retried).toMatchObject({ code: 0, stdout: expect.stringContaining('queued again') });
    expect((await readJob(t, failed.id)).status).toBe('queued');
    expect(canceled.code).toBe(0);
    const job = await request(t.app).get(`/admin/jobs/${queued.id}`).set(operator.auth);
    expect(job.body).toMatchObject({ status: 'canceled', error: { code: 'canceled' } });
    expect(notFailed).toMatchObject({ code: 1, stderr: expect.stringContaining('Only failed jobs can be retried') });
    expect(notFailed.stderr).not.toMatch(/\n\s+at /);
  });

  it('pauses and resumes a kind, as the admin it is told to act as', async () => {
    const paused = await admin(t, ['pause', 'video', '--reason', 'ffmpeg upgrade', '--as', operator.user.email]);
    expect(paused).toMatchObject({ code: 0, stdout: 'video jobs are paused.\n' });
    const during = await request(t.app).get('/admin/queue/pauses').set(operator.auth);
    expect(during.body.kinds).toEqual([
      expect.objectContaining({ kind: 'video', reason: 'ffmpeg upgrade', paused_by: operator.user.id }),
    ]);
    const [resumed, unknownKind, notAdmin] = await Promise.all([
      admin(t, ['resume', 'video']),
      admin(t, ['pause', 'no_such_kind']),
      admin(t, ['pauses', '--as', a.author.user.email]),
    ]);
    expect(resumed.code).toBe(0);
    expect((await request(t.app).get('/admin/queue/pauses').set(operator.auth)).body.kinds).toEqual([]);
    expect(unknownKind).toMatchObject({ code: 1, stderr: expect.stringContaining('No such kind of job') });
    expect(notAdmin).toMatchObject({ code: 1, stderr: expect.stringContaining('not an active global administrator') });
  });

  describe('database-url', () => {
    let dataDir: string;
    beforeAll(() => {
      dataDir = mkdtempSync(path.join(os.tmpdir(), 'platform-admin-cli-'));
      // As root the cluster belongs to the postgres user, who must be able to walk into it (db/embedded.ts).
      chmodSync(dataDir, 0o755);
    });
    afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

    it('prints DATABASE_URL, the running embedded server’s URL, or why there is none', async () => {
      const cluster = path.join(dataDir, 'postgres');
      const [given, nothing] = await Promise.all([
        admin(t, ['database-url']),
        admin(t, ['database-url'], { env: { DATABASE_URL: '', DATA_DIR: dataDir } }),
      ]);
      expect(given).toMatchObject({ code: 0, stdout: `${t.database.url}\n` });
      expect(nothing).toMatchObject({ code: 1, stderr: expect.stringContaining('holds no embedded PostgreSQL') });

      // A cluster whose postmaster is this (live) process, listening on port 54999, as its pid file says.
      mkdirSync(cluster, { recursive: true });
      writeFileSync(path.join(cluster, 'PG_VERSION'), '18\n');
      writeFileSync(path.join(dataDir, 'postgres.password'), 's3cret/+\n');
      writeFileSync(path.join(cluster, 'postmaster.pid'), `${process.pid}\n${cluster}\n0\n54999\n\n127.0.0.1\n`);
      const running = await admin(t, ['database-url', '--json'], { env: { DATABASE_URL: '', DATA_DIR: dataDir } });
      expect(json(running)).toEqual({
        url: 'postgres://postgres:s3cret%2F%2B@127.0.0.1:54999/app',
        source: 'embedded (running)',
      });

      rmSync(path.join(cluster, 'postmaster.pid'));
      const stopped = await admin(t, ['database-url'], { env: { DATABASE_URL: '', DATA_DIR: dataDir } });
      expect(stopped).toMatchObject({ code: 1, stderr: expect.stringContaining('is not running') });
    });
  });
});
