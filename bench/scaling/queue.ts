// graphile-worker's queue at a million waiting jobs, on a database of its
// own: how fast entries go in (add_jobs, 20,000 a call), what one add_job
// costs, what a worker's look for a job costs (graphile-worker 0.18's own
// get_job statement, batch 1, run and rolled back so the backlog stays), the
// same look when it must skip tenants (forbiddenFlags, as worker/tenant-slots.ts
// asks for a tenant that holds its share), no-op jobs picked and completed
// by bare graphile-worker, and the table's size. Each figure is beside the
// same one on a small queue, in the same run.
//
// The million entries are laid out by run_at so that skipping tenants reads
// past a known number of them: the first 1,000 belong to tenant a, the next
// 9,000 to b, the next 90,000 to c, the next 800,000 to d, and the last
// 100,000 to 100 other tenants in turn. Skipping a reads past 1,000 entries;
// a and b, 10,000; a, b and c, 100,000; all four, 900,000.
import { EventEmitter } from 'node:events';
import { run, type WorkerEvents } from 'graphile-worker';
import pg from 'pg';
import { createLogger } from '../../core/logger.ts';
import { workerLogger } from '../../core/worker-logger.ts';
import { withOwnDatabase } from '../own-database.ts';
import type { Server } from './pipeline.ts';

type Row = [string, string];

const task = 'job__run';

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
const ms = (value: number) => (value < 10 ? value.toFixed(2) : value.toFixed(0));
const p50p99 = (samples: number[]) => {
  const sorted = [...samples].sort((a, b) => a - b);
  return `p50 ${ms(quantile(sorted, 0.5))} ms, p99 ${ms(quantile(sorted, 0.99))} ms`;
};

/** graphile-worker 0.18's get_job statement (node_modules/graphile-worker/dist/sql/getJobs.js), batch 1, with flags to skip. */
const getJob = `
with j as (
  select jobs.job_queue_id, jobs.priority, jobs.run_at, jobs.id
    from graphile_worker._private_jobs as jobs
    where jobs.is_available = true
    and run_at <= now()
    and task_id = any($2::int[])
    and (jobs.job_queue_id is null or jobs.job_queue_id in (
      select id from graphile_worker._private_job_queues as job_queues
      where job_queues.is_available = true for update skip locked))
    and ((flags ?| $3::text[]) is not true)
    order by priority asc, run_at asc
    limit 1
    for update skip locked
), q as (
  update graphile_worker._private_job_queues as job_queues set locked_by = $1::text, locked_at = now()
    from j where job_queues.id = j.job_queue_id
)
update graphile_worker._private_jobs as jobs
  set attempts = jobs.attempts + 1, locked_by = $1::text, locked_at = now()
  from j where jobs.id = j.id
  returning *`;

/** `count` entries of `task` (each keyed and flagged with its tenant, as core/jobs/queue.ts makes them), due in the past in `tenantOf`'s order. */
async function fill(client: pg.Client, count: number, tenantOf: string, batch = 20_000): Promise<number> {
  const began = performance.now();
  for (let from = 0; from < count; from += batch) {
    await client.query(
      `select count(*) from graphile_worker.add_jobs(array(
         select row($1, json_build_object('job_id', gen_random_uuid()), null,
                    now() - interval '1 day' + i * interval '1 millisecond', 25,
                    'job:' || gen_random_uuid(), 0, array['tenant:' || (${tenantOf})])::graphile_worker.job_spec
         from generate_series($2::int, $3::int) i))`,
      [task, from, Math.min(count, from + batch) - 1],
    );
  }
  return count / ((performance.now() - began) / 1000);
}

async function timed(client: pg.Client, times: number, statement: () => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const began = performance.now();
    await statement();
    samples.push(performance.now() - began);
  }
  return samples;
}

/** One add_job as a submit makes it (key, tenant flag), committed on its own. */
const addOne = (client: pg.Client) => () =>
  client.query(
    `select graphile_worker.add_job($1, json_build_object('job_id', gen_random_uuid()),
                  max_attempts => 25, job_key => 'job:' || gen_random_uuid(), flags => array['tenant:late'])`,
    [task],
  );

/** Looks for a job skipping `skip` tenants, each in a transaction rolled back: what a worker's look costs, the backlog kept. */
async function looks(client: pg.Client, taskIds: number[], skip: string[], times: number): Promise<number[]> {
  const flags = skip.map((tenant) => `tenant:${tenant}`);
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    await client.query('begin');
    const began = performance.now();
    const { rowCount } = await client.query(getJob, ['bench-look', taskIds, flags]);
    samples.push(performance.now() - began);
    await client.query('rollback');
    if (rowCount !== 1) throw new Error('a look found no job');
  }
  return samples;
}

/** Picks and completes `count` no-op jobs with bare graphile-worker (concurrency 4, one process): jobs per second. */
async function drain(databaseUrl: string, count: number): Promise<number> {
  const events: WorkerEvents = new EventEmitter();
  let done = 0;
  let began = 0;
  const finished = new Promise<void>((resolve) =>
    events.on('job:complete', () => {
      if (++done === count) resolve();
    }),
  );
  events.once('job:start', () => (began = performance.now()));
  const runner = await run({
    events,
    connectionString: databaseUrl,
    concurrency: 4,
    noHandleSignals: true,
    logger: workerLogger(createLogger('silent')),
    crontab: '',
    taskList: { [task]: async () => {} },
  });
  await finished;
  const rate = count / ((performance.now() - began) / 1000);
  await runner.stop();
  return rate;
}

async function sizes(client: pg.Client): Promise<string> {
  const { rows } = await client.query<{ name: string; bytes: string }>(`
    select 'table' as name, pg_relation_size('graphile_worker._private_jobs') as bytes
    union all
    select indexrelid::regclass::text, pg_relation_size(indexrelid)
    from pg_index where indrelid = 'graphile_worker._private_jobs'::regclass`);
  return rows
    .map((row) => `${row.name.replace('graphile_worker.', '')} ${(Number(row.bytes) / 2 ** 20).toFixed(0)} MB`)
    .join(', ');
}

export async function queueFigures(server: Server, size = 1_000_000): Promise<Row[]> {
  return withOwnDatabase(server.adminUrl, 'bench_queue', 4, async (databaseUrl) => {
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    try {
      const rows: Row[] = [];
      const drained = 10_000;
      // A small queue first: 10,000 entries of 100 tenants.
      await fill(client, drained, `'t' || (i % 100)`);
      const { rows: tasks } = await client.query<{ id: number }>(
        'select id from graphile_worker._private_tasks where identifier = $1',
        [task],
      );
      const taskIds = tasks.map((row) => row.id);
      await client.query('analyze graphile_worker._private_jobs');
      const small = {
        add: await timed(client, 300, addOne(client)),
        look: await looks(client, taskIds, [], 300),
        skip: await looks(client, taskIds, ['t0'], 300),
        drain: await drain(databaseUrl, drained),
      };
      await client.query('delete from graphile_worker._private_jobs');
      await client.query('vacuum analyze graphile_worker._private_jobs');

      const tenantOf = `case when i < ${size / 1000} then 'a' when i < ${size / 100} then 'b'
        when i < ${size / 10} then 'c' when i < ${(size * 9) / 10} then 'd' else 'o' || (i % 100) end`;
      const perSecond = await fill(client, size, tenantOf);
      await client.query('vacuum analyze graphile_worker._private_jobs');
      rows.push(
        [
          `Queue: ${size.toLocaleString('en')} entries put in with add_jobs, 20,000 a call (keyed, flagged)`,
          `${perSecond.toFixed(0)} entries/s`,
        ],
        [`Queue: sizes at ${size.toLocaleString('en')} waiting`, await sizes(client)],
        [
          `add_job of one entry (keyed, flagged), committed: 10,000 waiting → ${size.toLocaleString('en')}`,
          `${p50p99(small.add)} → ${p50p99(await timed(client, 300, addOne(client)))}`,
        ],
        [
          `A look for a job (get_job, no flags): 10,000 waiting → ${size.toLocaleString('en')}`,
          `${p50p99(small.look)} → ${p50p99(await looks(client, taskIds, [], 300))}`,
        ],
        ['A look skipping one tenant whose entries are interleaved with others (10,000 waiting)', p50p99(small.skip)],
      );
      const waiting = size.toLocaleString('en');
      for (const [skip, past, times] of [
        [['a'], size / 1000, 100],
        [['a', 'b'], size / 100, 40],
        [['a', 'b', 'c'], size / 10, 10],
        [['a', 'b', 'c', 'd'], (size * 9) / 10, 5],
      ] as const) {
        rows.push([
          `A look skipping tenants whose ${past.toLocaleString('en')} entries come first (${waiting} waiting)`,
          p50p99(await looks(client, taskIds, [...skip], times)),
        ]);
      }
      rows.push([
        `No-op jobs picked and completed by bare graphile-worker (${drained.toLocaleString('en')}, concurrency 4): 10,000 waiting → ${waiting}`,
        `${small.drain.toFixed(0)} → ${(await drain(databaseUrl, drained)).toFixed(0)} jobs/s`,
      ]);
      // The fix to weigh: the other tenants' entries ahead (a priority of their own), as a flooding tenant's
      // would be behind if submits gave a tenant with a backlog a lower priority.
      await client.query(`update graphile_worker._private_jobs set priority = -1
                            where not flags ?| array['tenant:a', 'tenant:b', 'tenant:c', 'tenant:d']`);
      await client.query('vacuum analyze graphile_worker._private_jobs');
      rows.push([
        'The same look skipping all four, with the other tenants ahead by priority',
        p50p99(await looks(client, taskIds, ['a', 'b', 'c', 'd'], 100)),
      ]);
      return rows;
    } finally {
      await client.end();
    }
  });
}
