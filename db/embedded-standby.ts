// An embedded PostgreSQL primary with a streaming standby beside it, for the
// tests and the bench of the read replica (./replica.ts). The embedded
// distribution ships initdb, pg_ctl and postgres but no pg_basebackup, so the
// standby starts from a copy of the primary's data directory taken while the
// primary is cleanly stopped, plus standby.signal and primary_conninfo; it
// then streams from the primary (initdb's pg_hba.conf lets the postgres user
// replicate over 127.0.0.1 with its password).
import { execFileSync } from 'node:child_process';
import { chownSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import type { Logger } from '../core/logger.ts';
import { startEmbeddedPostgres, type EmbeddedPostgres } from './embedded.ts';

export type EmbeddedPair = {
  primary: EmbeddedPostgres;
  /** The standby as last started (same port each time). */
  readonly standby: EmbeddedPostgres;
  /** A fast shutdown of the standby. */
  stopStandby(): Promise<void>;
  /** Starts the stopped standby again, where its clients expect it, and waits until it streams. */
  startStandby(): Promise<void>;
  stop(): Promise<void>;
};

export type PairOptions = {
  /** A folder for both clusters (`primary/`, `standby/`). */
  dir: string;
  logger: Logger;
  /** `-c` settings of both servers (e.g. fsync=off for throwaway clusters). */
  settings?: Record<string, string>;
  /** Runs on the primary before the standby is copied from it (say, creating and migrating a database). */
  prepare?: (primary: EmbeddedPostgres) => Promise<void>;
};

export async function startEmbeddedPair(options: PairOptions): Promise<EmbeddedPair> {
  const { logger } = options;
  const primarySettings = { wal_level: 'replica', max_wal_senders: '4', ...options.settings };
  const primaryDir = path.join(options.dir, 'primary');
  const standbyDir = path.join(options.dir, 'standby');
  let primary = await startEmbeddedPostgres({ dir: primaryDir, logger, settings: primarySettings });
  try {
    await options.prepare?.(primary);
  } finally {
    await primary.stop();
  }
  // The whole folder: the cluster, and the password file the standby's server is started with.
  const copied = path.dirname(primary.dataDir);
  execFileSync('cp', ['-a', copied, standbyDir]);
  const pgdata = path.join(standbyDir, path.basename(primary.dataDir));
  const signal = path.join(pgdata, 'standby.signal');
  writeFileSync(signal, '');
  const { uid, gid } = statSync(pgdata);
  chownSync(signal, uid, gid);

  primary = await startEmbeddedPostgres({ dir: copied, logger, settings: primarySettings });
  const admin = new URL(primary.adminUrl);
  const conninfo = `host=127.0.0.1 port=${primary.port} user=postgres password=${decodeURIComponent(admin.password)}`;
  const standbyOptions = { dir: standbyDir, logger, settings: { ...options.settings, primary_conninfo: conninfo } };
  let standby: EmbeddedPostgres;
  try {
    standby = await startEmbeddedPostgres(standbyOptions);
    await streaming(primary);
  } catch (error) {
    await primary.stop();
    throw error;
  }
  return {
    primary,
    get standby() {
      return standby;
    },
    stopStandby: () => standby.stop(),
    async startStandby() {
      standby = await startEmbeddedPostgres({ ...standbyOptions, port: standby.port });
      await streaming(primary);
    },
    async stop() {
      await standby.stop();
      await primary.stop();
    },
  };
}

/** Waits until a standby streams from the primary. */
async function streaming(primary: EmbeddedPostgres): Promise<void> {
  const client = new pg.Client({ connectionString: primary.adminUrl });
  await client.connect();
  try {
    for (let waited = 0; ; waited += 50) {
      const { rows } = await client.query(`select 1 from pg_stat_replication where state = 'streaming'`);
      if (rows.length > 0) return;
      if (waited > 30_000) throw new Error('the standby did not start streaming within 30 s');
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  } finally {
    await client.end();
  }
}
