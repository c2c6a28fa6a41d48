// What a kind of job is: its input schema and the work. A handler either
// finishes (output, units used, files made) or hands the work to an
// asynchronous provider and waits for its webhook, after which `finish` runs.
import type { z } from 'zod';
import type { Resolve } from '../core/net/safe-fetch.ts';
import type { Deps, Services } from '../core/services.ts';
import type { JobRow } from '../core/jobs/model.ts';
import type { Success } from '../core/jobs/settle.ts';
import type { DatabasePool } from '../db/pool.ts';
import type { Background } from './background.ts';

export type JobContext = Deps & {
  job: JobRow;
  db: DatabasePool;
  /** Aborted when the job is canceled or the worker shuts down: stop, and kill what you spawned. */
  signal: AbortSignal;
  /**
   * Reports progress (0–1) and what is happening, for pollers and event
   * streams: written in the background (./background.ts), the latest report
   * replacing one that has not gone out yet — and, given `atMostEveryMs`,
   * written no more often than that, a report still waiting when the job
   * ends being dropped.
   */
  progress(fraction: number, stage: string, options?: { atMostEveryMs?: number }): Promise<void>;
  /** Writes that report on the job rather than do its work, in order, without waiting for them (./background.ts). */
  background: Background;
  /** How user-given URLs' host names are resolved (tests inject one); undefined: DNS. */
  resolve?: Resolve | undefined;
  /** The process's services, where the worker was given them (worker/runner.ts): agent runs' tools need them. */
  services?: Services | undefined;
};

export type Outcome =
  ({ status: 'succeeded' } & Success) | { status: 'waiting'; provider: string; providerRef: string };

export type JobHandler<S extends z.ZodType = z.ZodType> = {
  input: S;
  run(input: z.output<S>, context: JobContext): Promise<Outcome>;
  /** Completes the work with what the asynchronous provider delivered. */
  finish?(input: z.output<S>, delivered: unknown, context: JobContext): Promise<Outcome>;
  /**
   * What a job that fails for good has spent anyway, in credits: an agent
   * run's model calls, which the vendor bills whatever came of them. Charged
   * with the failure; absent, a failed job costs nothing.
   */
  spent?(context: Pick<JobContext, 'db' | 'job'>): Promise<number>;
};

export function defineJob<S extends z.ZodType>(handler: JobHandler<S>): JobHandler {
  return handler;
}
