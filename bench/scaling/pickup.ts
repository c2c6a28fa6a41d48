// Where an idle worker's enqueue → start goes, step by step (docs/scaling.md,
// "What one job waits for between its submit and its start"): no-op jobs
// submitted one at a time, each after a pause, in this process beside a
// platform worker, every statement timed as this process sends it and
// answered. Per job: the submit statement, the look for the job
// (graphile-worker's get_job), the way from the look's answer to the claim
// being sent, and started_at − created_at; beside them, bare
// graphile-worker's add_job → task start on the same server.
import pg from 'pg';
import { z } from 'zod';
import { createLogger } from '../../core/logger.ts';
import { submitJob } from '../../core/jobs/submit.ts';
import { createPool, sql } from '../../db/pool.ts';
import { actingFor } from '../../db/tenant-scope.ts';
import { quantile, rawPickupFigures, startBenchWorker } from '../jobs.ts';
import { withOwnDatabase } from '../own-database.ts';
import { seedTenants, type Server } from './pipeline.ts';

type Row = [string, string];

type Sent = { step: 'submit' | 'look' | 'claim'; sent: number; answered?: number };

/** Which step a statement is: the submit, the look or the claim (other statements are not timed). */
function stepOf(config: unknown): Sent['step'] | undefined {
  if (typeof config !== 'object' || config === null) return undefined;
  const { name, text } = config as { name?: string; text?: string };
  if (name?.startsWith('get_job')) return 'look';
  if (text?.includes('insert into jobs')) return 'submit';
  if (text?.includes('with claimed as')) return 'claim';
  return undefined;
}

/** Times the statements of the three steps that any pg client of this process sends, while `on`. */
function timeSteps() {
  const sent: Sent[] = [];
  let on = false;
  const query = pg.Client.prototype.query as (...args: unknown[]) => unknown;
  pg.Client.prototype.query = function (this: pg.Client, ...args: unknown[]) {
    const answer = query.apply(this, args);
    const step = on ? stepOf(args[0]) : undefined;
    if (step && answer instanceof Promise) {
      const entry: Sent = { step, sent: performance.now() };
      sent.push(entry);
      const done = () => (entry.answered = performance.now());
      answer.then(done, done);
    }
    return answer;
  } as typeof pg.Client.prototype.query;
  return {
    sent,
    set on(value: boolean) {
      on = value;
    },
    restore: () => (pg.Client.prototype.query = query as typeof pg.Client.prototype.query),
  };
}

const shown = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  return `${quantile(sorted, 0.5).toFixed(2)} / ${quantile(sorted, 0.9).toFixed(2)} ms`;
};

export async function pickupFigures(server: Server, jobs = 100, pauseMs = 20): Promise<Row[]> {
  const rows = await withOwnDatabase(server.adminUrl, 'bench_pickup_steps', 4, async (databaseUrl, config) => {
    const logger = createLogger('silent');
    const db = await createPool(databaseUrl, { maxPoolSize: 4 });
    const [access] = await seedTenants(db, jobs + 1, 1);
    const worker = await startBenchWorker({ databaseUrl, config, db, logger });
    const steps = timeSteps();
    const times = { submit: [] as number[], look: [] as number[], toClaim: [] as number[], start: [] as number[] };
    const startedAfter = z.object({ ms: z.number().nullable(), done: z.boolean() });
    try {
      // The first job warms the connections and the statements; it is not counted.
      for (let i = 0; i <= jobs; i++) {
        await new Promise((resolve) => setTimeout(resolve, pauseMs));
        const from = steps.sent.length;
        steps.on = i > 0;
        const job = await actingFor(access!.site.tenant_id, () =>
          submitJob(db, config, access!, { kind: 'bench_noop', input: {}, estimatedUnits: 1 }),
        );
        const started = () =>
          db.one(sql.type(startedAfter)`
            select extract(epoch from started_at - created_at)::float8 * 1000 as ms, finished_at is not null as done
            from jobs where id = ${job.id}`);
        let row = await started();
        while (!row.done) {
          await new Promise((resolve) => setTimeout(resolve, 2));
          row = await started();
        }
        steps.on = false;
        if (i === 0) continue;
        const mine = steps.sent.slice(from);
        const submit = mine.find((entry) => entry.step === 'submit');
        const look = mine.find((entry) => entry.step === 'look');
        const claim = mine.find((entry) => entry.step === 'claim');
        if (!submit?.answered || !look?.answered || !claim) throw new Error('a step of the job was not seen');
        times.submit.push(submit.answered - submit.sent);
        times.look.push(look.answered - look.sent);
        times.toClaim.push(claim.sent - look.answered);
        times.start.push(row.ms!);
      }
    } finally {
      steps.restore();
      await worker.stop();
      await db.end();
    }
    return [
      [
        `${jobs} no-op jobs, one at a time on an idle worker of 4: submit statement, sent → answered, p50 / p90`,
        shown(times.submit),
      ],
      ['look for the job (get_job), sent → answered', shown(times.look)],
      ['look answered → claim sent (graphile-worker, the task, slonik)', shown(times.toClaim)],
      ['enqueue → start (started_at − created_at)', shown(times.start)],
    ] satisfies Row[];
  });
  return [...rows, ...(await rawPickupFigures(server.adminUrl, jobs))];
}
