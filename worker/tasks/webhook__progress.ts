// A job's progress, told to its webhook: queued by the first change of a
// second (core/webhooks/announce.ts), it reads the job as it is by now, so the
// changes meanwhile make one delivery. A job that has ended meanwhile is told
// by its completion instead.
import { z } from 'zod';
import { isFinished, jobById } from '../../core/jobs/model.ts';
import { record, wants } from '../../core/webhooks/announce.ts';
import { defineTask } from '../task.ts';

export default defineTask({
  payload: z.object({ job_id: z.uuid() }),
  async run({ job_id }, { db }) {
    const job = await jobById(db, job_id);
    if (!job || isFinished(job.status) || !wants(job, 'progress')) return;
    await record(db, job, 'progress', job.updated_at);
  },
});
