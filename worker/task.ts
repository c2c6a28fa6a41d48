// How a task file is written: a zod schema for the payload and a run function.
// The payload is parsed before anything else happens; a payload that can never
// be valid is logged and dropped rather than retried 25 times.
import type { Services } from '../core/services.ts';
import type { Task } from 'graphile-worker';
import type { z } from 'zod';
import type { Deps } from '../core/services.ts';
import type { JobEvents } from '../core/jobs/events.ts';
import type { DatabasePool } from '../db/pool.ts';
import type { Resolve } from '../core/net/safe-fetch.ts';
import type { JobHandler } from './job.ts';

/** What every task and every job run may use, built once per worker process: the domain's deps, on the pool. */
export type TaskDeps = Deps & {
  db: DatabasePool;
  events: JobEvents;
  /** The kinds of platform job this worker runs (tests add their own). */
  kinds: Map<string, JobHandler>;
  /** How user-given URLs' host names are resolved; tests inject one (core/net/safe-fetch.ts), else DNS. */
  resolve?: Resolve;
  /** The process's services, for jobs that act as the API does (agent runs' tools); see worker/runner.ts. */
  services?: Services;
};

export type TaskContext = TaskDeps & {
  job: { id: string; attempts: number; maxAttempts: number };
  workerId: string;
  signal: AbortSignal;
};

export type TaskDefinition<S extends z.ZodType = z.ZodType> = {
  payload: S;
  run: (payload: z.output<S>, context: TaskContext) => Promise<void>;
};

export function defineTask<S extends z.ZodType>(definition: TaskDefinition<S>): TaskDefinition<S> {
  return definition;
}

export function toGraphileTask(identifier: string, definition: TaskDefinition, deps: TaskDeps): Task {
  return async (rawPayload, helpers) => {
    // graphile-worker's own id, under a name of its own: `job_id` is the platform job's, bound by the run (jobs/run.ts).
    const logger = deps.logger.child({ task: identifier, queue_job_id: helpers.job.id });
    const parsed = definition.payload.safeParse(rawPayload ?? {});
    if (!parsed.success) {
      logger.error({ issues: parsed.error.issues }, 'invalid job payload; the job is dropped without running');
      return;
    }
    await definition.run(parsed.data, {
      ...deps,
      logger,
      job: { id: helpers.job.id, attempts: helpers.job.attempts, maxAttempts: helpers.job.max_attempts },
      workerId: helpers.job.locked_by ?? 'unknown',
      signal: helpers.abortSignal,
    });
  };
}
