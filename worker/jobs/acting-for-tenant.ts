// A job's work acts for the job's tenant in the database (db/tenant-scope.ts):
// whatever a handler reads or writes through the pool sees that tenant's rows
// only, so a query that forgets its tenant filter cannot reach another's.
// The run around it (claiming, settling, requeueing: worker/jobs/run.ts) is
// the worker's own bookkeeping and acts for every tenant.
import { actingFor } from '../../db/tenant-scope.ts';
import type { JobHandler } from '../job.ts';

/** The same kinds, each handler's `run` and `finish` acting for the tenant of the job they are given. */
export function actingForTheirTenant(kinds: Map<string, JobHandler>): Map<string, JobHandler> {
  return new Map([...kinds].map(([kind, handler]) => [kind, scoped(handler)]));
}

function scoped(handler: JobHandler): JobHandler {
  const { finish } = handler;
  return {
    ...handler,
    run: (input, context) => actingFor(context.job.tenant_id, () => handler.run(input, context)),
    ...(finish && {
      finish: (input, delivered, context) =>
        actingFor(context.job.tenant_id, () => finish.call(handler, input, delivered, context)),
    }),
  };
}
