// Copies a cloned tenant's content into its new sites (core/cloning/content-copy.ts).
// It reads the source tenant and writes the copy, so it acts for every tenant,
// not the job's alone. Progress: the rows copied of those counted at the start.
import { allTenants, actingFor } from '../../db/tenant-scope.ts';
import { copyContent, countContent } from '../../core/cloning/content-copy.ts';
import { cloneInput } from '../../core/cloning/tenant-clone.ts';
import { defineJob } from '../job.ts';

export default defineJob({
  input: cloneInput,
  async run(input, context) {
    const { db, job, signal } = context;
    return actingFor(allTenants, async () => {
      const started = Date.now();
      const counted = await countContent(db, input.sites);
      const total = Object.values(counted).reduce((sum, n) => sum + n, 0);
      let done = 0;
      const { counts, stageMs } = await copyContent(db, job.tenant_id, input.sites, signal, async (rows, stage) => {
        done += rows;
        await context.progress(total === 0 ? 1 : Math.min(done / total, 0.99), `copying ${stage}`);
      });
      return {
        status: 'succeeded',
        units: 1,
        credits: 0,
        output: { sites: input.sites.length, ...counts, took_ms: Date.now() - started, stage_ms: stageMs },
      };
    });
  },
});
