// Read replica figures for npm run bench: public delivery read throughput of
// an API process that reads a streaming standby (DATABASE_READ_URL) against
// one that reads the primary alone, in the same run, and where each
// request's CPU goes (API, primary, standby). Both servers are embedded
// PostgreSQL beside each other (db/embedded-standby.ts), so on this machine
// they share its cores with the API and the load client: the figure says what
// moving the reads costs or saves here, not what a second machine would add.
// The public page is the content bench's, with the cache off, so every
// request reads the database.
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { createLogger } from '../core/logger.ts';
import { startEmbeddedPair } from '../db/embedded-standby.ts';
import type { EmbeddedPostgres } from '../db/embedded.ts';
import { migrate } from '../db/migrate.ts';
import { interleaved, rate, ratio } from './compare.ts';
import { publicPage } from './content.ts';
import { cpuPerRequest, withChildren } from './cpu.ts';
import { load, loadClient } from './load.ts';
import type { ApiLauncher } from './request-path.ts';

type Row = [string, string];

const postmasterPid = (server: EmbeddedPostgres) =>
  Number(readFileSync(path.join(server.dataDir, 'postmaster.pid'), 'utf8').split('\n')[0]);

async function adminToken(apiUrl: string): Promise<string> {
  const res = await fetch(`${apiUrl}/auth/login`, {
    method: 'POST',
    headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ username: 'admin@example.com', password: 'change-me-now' }),
  });
  if (!res.ok) throw new Error(`login answered ${res.status}`);
  return ((await res.json()) as { access_token: string }).access_token;
}

/** Waits until the API process reads its replica (its /health says the replica is up). */
async function replicaUsed(apiUrl: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    const health = (await (await fetch(`${apiUrl}/health`)).json()) as { checks: { replica?: { status: string } } };
    if (health.checks.replica?.status === 'up') return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the replica did not come up within 15 s');
}

export async function replicaFigures(launchApi: ApiLauncher): Promise<Row[]> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-replica-'));
  // As root the clusters run as the postgres user, who must enter the folder.
  chmodSync(dir, 0o755);
  const pair = await startEmbeddedPair({
    dir,
    logger: createLogger('warn'),
    async prepare(primary) {
      const admin = new pg.Client({ connectionString: primary.adminUrl });
      await admin.connect();
      await admin.query('create database app');
      await admin.end();
      await migrate(primary.urlFor('app'));
    },
  });
  const primaryUrl = pair.primary.urlFor('app');
  const noCache = { PUBLIC_CACHE_SECONDS: '0' };
  const alone = await launchApi(primaryUrl, noCache);
  const withReplica = await launchApi(primaryUrl, { ...noCache, DATABASE_READ_URL: pair.standby.urlFor('app') });
  try {
    const token = await adminToken(alone.url);
    const { pagePath } = await publicPage(alone.url, token, 'Replica bench');
    await replicaUsed(withReplica.url);
    const loads = await interleaved(
      { alone: { url: `${alone.url}${pagePath}` }, replica: { url: `${withReplica.url}${pagePath}` } },
      3,
      4,
    );
    const servers = {
      primary: () => withChildren(postmasterPid(pair.primary)),
      standby: () => withChildren(postmasterPid(pair.standby)),
    };
    const split = async (apiUrl: string, pid: number) =>
      (await cpuPerRequest({ api: () => [pid], ...servers }, () => load(`${apiUrl}${pagePath}`, { seconds: 4 }), 4))
        .micros;
    const aloneCpu = await split(alone.url, alone.pid);
    const replicaCpu = await split(withReplica.url, withReplica.pid);
    const cpu = (micros: typeof aloneCpu) => `${micros.api} + ${micros.primary} + ${micros.standby} µs`;
    return [
      [
        'Replica: set-up',
        `an embedded primary and a streaming standby of it on this machine (${os.cpus().length} cores, shared with ` +
          `the API and the load client, ${loadClient}); the content bench's public page (10 elements, de-CH), ` +
          'no cache; 3 interleaved rounds of 4 s after a warm-up round; medians',
      ],
      ['Public page, no cache, reads on the primary alone', rate(loads.alone)],
      [
        'The same, reads on the standby (DATABASE_READ_URL)',
        `${rate(loads.replica)}; ${ratio(loads.replica, loads.alone)} the primary alone`,
      ],
      ['CPU per request, API + primary + standby: the primary alone', cpu(aloneCpu)],
      ['CPU per request, API + primary + standby: reads on the standby', cpu(replicaCpu)],
    ];
  } finally {
    await Promise.all([alone.stop(), withReplica.stop()]);
    await pair.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
