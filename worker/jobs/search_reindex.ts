// Rebuilds a site's search documents (core/search/reindex.ts). One unit: the site.
import { z } from 'zod';
import { reindexSite } from '../../core/search/reindex.ts';
import { defineJob } from '../job.ts';

export default defineJob({
  input: z.object({}),
  async run(_input, context) {
    const started = Date.now();
    const report = await reindexSite(context.db, context.job.site_id, context.job.id, context.progress, context.signal);
    return { status: 'succeeded', units: 1, output: { ...report, took_ms: Date.now() - started } };
  },
});
