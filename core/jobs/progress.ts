// A running job's progress, as its handler reports it: on the job's row, and
// told to its webhook (at most once a second, core/webhooks/announce.ts).
import { prepared, sql, type CommonQueryMethods } from '../../db/pool.ts';
import { unhurried } from '../../db/unhurried.ts';
import { announce } from '../webhooks/announce.ts';
import type { JobRow } from './model.ts';

/**
 * Written only while this run still holds the job: a canceled or taken-over
 * run's late report changes nothing. It is news for pollers, not a record:
 * its commit does not wait for the disk (db/unhurried.ts).
 */
export async function reportProgress(db: CommonQueryMethods, job: JobRow, fraction: number, stage: string) {
  await db.query(
    prepared(sql.typeAlias('void')`
      ${unhurried}
      update jobs set progress = ${Math.min(1, Math.max(0, fraction))}, stage = ${stage.slice(0, 200)}
      where id = ${job.id} and status = 'running' and locked_by = ${job.locked_by} and exists (select from unhurried)`),
  );
  await announce(db, job, 'progress');
}
