// A running job's progress, as its handler reports it: on the job's row, and
// told to its webhook (at most once a second, core/webhooks/announce.ts).
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { announce } from '../webhooks/announce.ts';
import type { JobRow } from './model.ts';

/** Written only while this run still holds the job: a canceled or taken-over run's late report changes nothing. */
export async function reportProgress(db: CommonQueryMethods, job: JobRow, fraction: number, stage: string) {
  await db.query(sql.typeAlias('void')`
    update jobs set progress = ${Math.min(1, Math.max(0, fraction))}, stage = ${stage.slice(0, 200)}
    where id = ${job.id} and status = 'running' and locked_by = ${job.locked_by}`);
  await announce(db, job, 'progress');
}
