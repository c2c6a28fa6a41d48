// `npm run bench -- pools`: what worker pools per kind (WORKER_KINDS) do for
// a speech job behind a flood of videos (issue 39). On a database of its own,
// one tenant queues 50 video jobs; once they run, it and another tenant each
// submit one speech job. Each speech job's wait (enqueue → start, the jobs'
// own timestamps) is measured with:
// - one shared pool: a worker of 4 slots taking every kind;
// - two pools: a media worker of 3 slots (WORKER_KINDS=bench_video) and a
//   light one of 1 (WORKER_KINDS=bench_speech), the same 4 slots in all;
// - the shared pool again, with the speech kind's priority set to run first
//   (PUT /admin/queue/kinds/{kind}): within the tenant's share of the slots.
// The jobs are stand-ins that sleep (a video 1 s, speech 50 ms), so the
// figures are the queue's: who gets a slot when, with no CPU contention
// between ffmpeg and espeak-ng (a real video takes seconds of both cores of
// this machine: `npm run bench -- media`). The workers are runners of the
// platform's worker (worker/runner.ts) in the bench's process, each with its
// own connections, slots and tenant shares, as two processes would have.
// JOB_TENANT_CONCURRENCY is 4, so that the tenant's share across workers does
// not hold the light pool back while the media pool runs its videos.
import { z } from 'zod';
import { loadConfig, type Config } from '../core/config.ts';
import { createLogger } from '../core/logger.ts';
import { submitJob } from '../core/jobs/submit.ts';
import type { SiteAccess } from '../core/tenancy/site-access.ts';
import { createPool, sql, type DatabasePool } from '../db/pool.ts';
import { startWorker, type WorkerHandle } from '../worker/runner.ts';
import { payers, sleepingKind, until } from './jobs.ts';
import { withOwnDatabase } from './own-database.ts';

type Row = [string, string];

const flood = 50;
const videoMs = 1000;
const speechMs = 50;
const slots = 4;

const kinds = new Map([
  ['bench_video', sleepingKind],
  ['bench_speech', sleepingKind],
]);

const timing = z.object({ wait_ms: z.number().nullable(), run_ms: z.number().nullable() });

export const poolFigures = (adminUrl: string) =>
  withOwnDatabase(adminUrl, 'bench_pools', slots, async (databaseUrl) => {
    const config = loadConfig({
      NODE_ENV: 'production',
      JWT_SECRET: 'x'.repeat(32),
      DATABASE_URL: databaseUrl,
      LOG_LEVEL: 'silent',
      JOB_TENANT_CONCURRENCY: String(slots),
    });
    const db = await createPool(databaseUrl, { maxPoolSize: 12 });
    try {
      return await figures(databaseUrl, config, db);
    } finally {
      await db.end();
    }
  });

async function figures(databaseUrl: string, config: Config, db: DatabasePool): Promise<Row[]> {
  const logger = createLogger('silent');
  await db.query(sql.typeAlias('void')`
    insert into cost_settings (kind, unit, price) values ('bench_video', 'item', 1), ('bench_speech', 'item', 1)`);
  const [flooding, other] = await payers(db, 2, 1_000_000);
  const submit = (who: SiteAccess, kind: string, ms: number) =>
    submitJob(db, config, who, { kind, input: { ms }, estimatedUnits: 1 });
  const timingOf = (id: string) =>
    db.one(sql.type(timing)`
      select (extract(epoch from started_at - created_at) * 1000)::float8 as wait_ms,
             (extract(epoch from finished_at - started_at) * 1000)::float8 as run_ms
      from jobs where id = ${id}`);
  const finished = (ids: string[]) =>
    until(async () => {
      const left = await db.oneFirst(sql.type(z.object({ n: z.number() }))`
        select count(*)::int as n from jobs where id = any(${sql.array(ids, 'uuid')}) and finished_at is null`);
      return left === 0;
    }, 600_000);
  const running = (tenantId: string) =>
    db.oneFirst(sql.type(z.object({ n: z.number() }))`
      select count(*)::int as n from jobs where status = 'running' and tenant_id = ${tenantId}`);
  const start = (concurrency: number, workerKinds: string[]) =>
    startWorker({
      databaseUrl,
      config: { ...config, worker: { ...config.worker, concurrency, kinds: workerKinds } },
      db,
      logger,
      crontab: '',
      extraKinds: kinds,
    });
  const setSpeechPriority = (priority: number) =>
    db.query(sql.typeAlias('void')`
      insert into job_kind_settings (kind, priority) values ('bench_speech', ${priority})
      on conflict (kind) do update set priority = excluded.priority`);

  /** The flood, then a speech job of its tenant and one of another; their waits and runs, and the flood's time. */
  const scenario = async (workers: () => Promise<WorkerHandle[]>, busySlots: number) => {
    const began = Date.now();
    const videos: string[] = [];
    for (let i = 0; i < flood; i++) videos.push((await submit(flooding!, 'bench_video', videoMs)).id);
    const started = await workers();
    try {
      // The flood holds its share of the slots before the speech jobs come.
      await until(async () => (await running(flooding!.site.tenant_id)) >= busySlots, 60_000);
      const own = await submit(flooding!, 'bench_speech', speechMs);
      const others = await submit(other!, 'bench_speech', speechMs);
      await finished([own.id, others.id, ...videos]);
      return {
        own: await timingOf(own.id),
        others: await timingOf(others.id),
        floodSeconds: (Date.now() - began) / 1000,
      };
    } finally {
      await Promise.all(started.map((worker) => worker.stop()));
    }
  };

  // The speech pool's own work: a speech job on an idle worker, 5 times.
  const idle = await start(slots, []);
  const alone: z.infer<typeof timing>[] = [];
  try {
    for (let i = 0; i < 5; i++) {
      const job = await submit(flooding!, 'bench_speech', speechMs);
      await finished([job.id]);
      alone.push(await timingOf(job.id));
    }
  } finally {
    await idle.stop();
  }
  const shared = await scenario(async () => [await start(slots, [])], slots - 1);
  const split = await scenario(
    async () => [await start(slots - 1, ['bench_video']), await start(1, ['bench_speech'])],
    slots - 2,
  );
  await setSpeechPriority(-10);
  const prioritised = await scenario(async () => [await start(slots, [])], slots - 1);
  await setSpeechPriority(0);

  const ms = (value: number | null) => `${(value ?? Number.NaN).toFixed(0)} ms`;
  const waits = (result: Awaited<ReturnType<typeof scenario>>) =>
    `its tenant’s ${ms(result.own.wait_ms)}, another tenant’s ${ms(result.others.wait_ms)}; ` +
    `flood and speech done in ${result.floodSeconds.toFixed(1)} s`;
  const waitsAlone = alone.map((sample) => sample.wait_ms ?? Number.NaN).sort((a, b) => a - b);
  const runsAlone = alone.map((sample) => sample.run_ms ?? Number.NaN).sort((a, b) => a - b);
  const label = `${flood} video stand-ins (${videoMs} ms sleeps) queued by one tenant, then a speech stand-in (${speechMs} ms) of it and of another tenant`;
  return [
    [
      `Pools: a speech stand-in on an idle worker (the speech pool's own work), enqueue → start / run, median of 5`,
      `${ms(waitsAlone[2]!)} / ${ms(runsAlone[2]!)}`,
    ],
    [`Pools: ${label}; one shared pool of ${slots} slots: speech enqueue → start`, waits(shared)],
    [
      `Pools: the same with two pools, WORKER_KINDS=bench_video (${slots - 1} slots) and bench_speech (1 slot): speech enqueue → start`,
      waits(split),
    ],
    [
      `Pools: the same on one shared pool of ${slots}, the speech kind at priority -10 (runs first, within the tenant's share): speech enqueue → start`,
      waits(prioritised),
    ],
  ];
}
