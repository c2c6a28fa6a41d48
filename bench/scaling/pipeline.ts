// The job pipeline with 1, 2 and 4 worker processes of concurrency 4 (and
// one of concurrency 8, as many slots as two processes, to tell more slots
// from more processes),
// on a database of its own: no-op jobs of 8 tenants through the platform
// (job row, credits reserved at submit, claim, settle with debit and
// release, tenant slots) and, beside them, no-op jobs through bare
// graphile-worker. The queue is filled first and held (its entries due in a
// day), the processes started and waited for, then every entry is made due at
// once: so the figure is the rate at which the processes drain a backlog, not
// the rate at which this process submits. CPU per job is read from /proc for
// the worker processes and for the PostgreSQL backends of the database.
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { z } from 'zod';
import { submitJob } from '../../core/jobs/submit.ts';
import { findSiteAccess, type SiteAccess } from '../../core/tenancy/site-access.ts';
import { createPool, sql } from '../../db/pool.ts';
import { cpuMs, reapedCpuMs, withChildren } from '../cpu.ts';
import { median } from '../compare.ts';
import { withOwnDatabase, workerEnv } from '../own-database.ts';
import { fanOut, grantCredits, until } from '../jobs.ts';

type Row = [string, string];

/** The server the sections work on: its admin URL, and its postmaster's pid when it is the bench's own. */
export type Server = { adminUrl: string; postmaster?: number | undefined };

const tenants = 8;

type Worker = { child: ChildProcess; exited: Promise<unknown> };

function startProcess(mode: 'platform' | 'raw', databaseUrl: string, concurrency: number): Promise<Worker> {
  const child = spawn(process.execPath, [path.join(import.meta.dirname, 'worker-process.ts'), mode], {
    env: { PATH: process.env.PATH, ...workerEnv(databaseUrl, concurrency) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return new Promise((resolve, reject) => {
    child.stdout.once('data', () => resolve({ child, exited }));
    child.once('exit', (code) => reject(new Error(`worker process exited with ${code}`)));
  });
}

/** Users of `n` tenants, one site each, with credits for `count` no-op jobs in all; their site access. */
export async function seedTenants(
  db: Awaited<ReturnType<typeof createPool>>,
  count: number,
  n = tenants,
): Promise<SiteAccess[]> {
  const made = await db.many(sql.type(z.object({ tenant: z.string(), site: z.string(), user: z.string() }))`
    with n as (select i from generate_series(1, ${n}) i),
         t as (insert into tenants (name, slug) select 'Bench ' || i, 'bench-' || i from n returning id, slug),
         s as (insert into sites (tenant_id, name, slug) select id, slug, slug from t returning id, tenant_id, slug),
         u as (insert into users (email, full_name, email_verified)
               select slug || '@example.com', slug, true from t returning id, email),
         m as (insert into memberships (tenant_id, user_id, role)
               select t.id, u.id, 'admin' from t join u on u.email = t.slug || '@example.com' returning tenant_id, user_id),
         c as (insert into cost_settings (kind, unit, price) values ('bench_noop', 'item', 1) returning 1)
    select m.tenant_id as tenant, s.id as site, m.user_id as user
    from m join s on s.tenant_id = m.tenant_id, (select count(*) from c) cc`);
  const accesses: SiteAccess[] = [];
  for (const row of made) {
    await grantCredits(db, row, count * 10);
    const actor = { kind: 'user' as const, userId: row.user, sessionId: 'bench', isGlobalAdmin: false };
    const access = await findSiteAccess(db, actor, row.site);
    if (!access) throw new Error('a bench user does not reach its site');
    accesses.push(access);
  }
  return accesses;
}

/**
 * The CPU milliseconds PostgreSQL has spent so far: with the server's
 * postmaster pid (a server of the bench's own), the postmaster, its live
 * children and the children it has reaped (a backend that closed counts
 * too); without it (a shared server), the backends serving this database now.
 */
export async function serverCpu(client: pg.Client, postmaster: number | undefined): Promise<() => number> {
  if (postmaster) return () => withChildren(postmaster).reduce((sum, pid) => sum + cpuMs(pid), reapedCpuMs(postmaster));
  const { rows } = await client.query<{ pid: number }>(
    'select pid from pg_stat_activity where datname = current_database() and pid <> pg_backend_pid()',
  );
  return () => rows.reduce((sum, row) => sum + cpuMs(row.pid), 0);
}

type Drain = { perSecond: number; cpuMsPerJob: { workers: number; database: number }; bytesPerJob?: number };

/** Fills the queue with `count` no-op jobs, starts `processes` worker processes, and times the drain. */
type Shape = { processes: number; concurrency: number };

async function drain(server: Server, mode: 'platform' | 'raw', shape: Shape, count: number): Promise<Drain> {
  const { processes, concurrency } = shape;
  return withOwnDatabase(server.adminUrl, 'bench_scaling', concurrency, async (databaseUrl, config) => {
    const db = await createPool(databaseUrl, { maxPoolSize: 8 });
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    const workers: Worker[] = [];
    try {
      if (mode === 'platform') {
        const accesses = await seedTenants(db, count);
        await fanOut(count, 8, (i) =>
          submitJob(db, config, accesses[i % accesses.length]!, { kind: 'bench_noop', input: {}, estimatedUnits: 1 }),
        );
      } else {
        await client.query(
          `select count(*) from graphile_worker.add_jobs(array(
             select row('bench__noop', '{}'::json, null, null, null, null, null, null)::graphile_worker.job_spec
             from generate_series(1, $1)))`,
          [count],
        );
      }
      await client.query(`update graphile_worker._private_jobs set run_at = now() + interval '1 day'`);
      for (let i = 0; i < processes; i++) workers.push(await startProcess(mode, databaseUrl, concurrency));
      // Every process's pool connections are open once it said ready; read the CPU counters now.
      const database = await serverCpu(client, server.postmaster);
      const workerCpu = () => workers.reduce((sum, worker) => sum + cpuMs(worker.child.pid!), 0);
      const before = { workers: workerCpu(), database: database() };
      const began = performance.now();
      await client.query(`update graphile_worker._private_jobs set run_at = now()`);
      await client.query(`select pg_notify('jobs:insert', json_build_object('count', $1::int)::text)`, [count]);
      const left =
        mode === 'platform'
          ? `select count(*)::int as n from jobs where status <> 'succeeded'`
          : `select count(*)::int as n from graphile_worker._private_jobs`;
      // Asked every 100 ms: the count is PostgreSQL work too, and would otherwise be a visible part of a no-op job's.
      await until(async () => (await client.query<{ n: number }>(left)).rows[0]!.n === 0, 600_000, 100);
      const seconds = (performance.now() - began) / 1000;
      const result: Drain = {
        perSecond: count / seconds,
        cpuMsPerJob: {
          workers: (workerCpu() - before.workers) / count,
          database: (database() - before.database) / count,
        },
      };
      if (mode === 'platform') {
        // What a finished job leaves behind: its row, its attempt and its ledger entries (with their indexes).
        const { rows } = await client.query<{ bytes: string }>(
          `select sum(pg_total_relation_size(t))::bigint as bytes
           from unnest(array['jobs', 'job_attempts', 'credit_entries']::regclass[]) t`,
        );
        result.bytesPerJob = Number(rows[0]!.bytes) / count;
      }
      return result;
    } finally {
      for (const worker of workers) worker.child.kill('SIGTERM');
      await Promise.all(workers.map((worker) => worker.exited));
      await client.end();
      await db.end();
    }
  });
}

const shapes: Shape[] = [
  { processes: 1, concurrency: 4 },
  { processes: 2, concurrency: 4 },
  { processes: 4, concurrency: 4 },
  { processes: 1, concurrency: 8 },
];

/**
 * Three rounds, the second in the reverse order, so a neighbour's load
 * drifting over the run falls on every shape alike; each figure is the
 * median of its rounds, with their range beside it.
 */
export async function pipelineFigures(server: Server, platformJobs = 3000, rawJobs = 15_000): Promise<Row[]> {
  const rows: Row[] = [];
  for (const mode of ['platform', 'raw'] as const) {
    const count = mode === 'platform' ? platformJobs : rawJobs;
    const runs = new Map<Shape, Drain[]>(shapes.map((shape) => [shape, []]));
    for (const shape of [...shapes, ...[...shapes].reverse(), ...shapes])
      runs.get(shape)!.push(await drain(server, mode, shape, count));
    const typical = (shape: Shape, pick: (d: Drain) => number) => median(runs.get(shape)!.map(pick));
    const one = typical(shapes[0]!, (d) => d.perSecond);
    for (const shape of shapes) {
      const rates = runs.get(shape)!.map((d) => d.perSecond);
      const perSecond = median(rates);
      const scale = shape === shapes[0] ? '' : `; ×${(perSecond / one).toFixed(2)} 1 × 4`;
      rows.push([
        `${mode === 'platform' ? `Platform no-op jobs, ${count} queued (${tenants} tenants)` : `Raw graphile-worker no-op jobs, ${count} queued`}, ` +
          `${shape.processes} process${shape.processes > 1 ? 'es' : ''} × ${shape.concurrency}`,
        `${perSecond.toFixed(0)} jobs/s (${Math.min(...rates).toFixed(0)}–${Math.max(...rates).toFixed(0)})${scale}; CPU per job ` +
          `${typical(shape, (d) => d.cpuMsPerJob.workers).toFixed(2)} ms in the workers + ` +
          `${typical(shape, (d) => d.cpuMsPerJob.database).toFixed(2)} ms in PostgreSQL`,
      ]);
    }
    if (mode === 'platform')
      rows.push([
        'Disk per finished platform job (jobs + job_attempts + credit_entries, with indexes)',
        `${typical(shapes[0]!, (d) => d.bytesPerJob ?? 0).toFixed(0)} bytes`,
      ]);
  }
  return rows;
}
