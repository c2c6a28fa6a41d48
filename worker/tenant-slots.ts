// Fairness between tenants in a worker process. Before each look for a job,
// graphile-worker asks which flags to skip (forbiddenFlags); we name the
// tenants that may not start another job here:
// - one that runs as many jobs in this process as it may: at most
//   JOB_TENANT_CONCURRENCY, and never every slot — one always stays for the
//   other tenants, so a tenant whose jobs run for minutes cannot make another
//   tenant's job wait for them;
// - one that runs JOB_TENANT_CONCURRENCY jobs of this pool's kinds across all
//   workers, as read from the jobs table every second (so between two
//   readings, processes may together start a few more). Per pool (the kinds
//   WORKER_KINDS names; every kind without it): pools exist so that a burst of
//   one kind cannot hold back another, and a tenant's four videos in the
//   media pool must not keep its speech job out of the light pool's free
//   slots. Within a pool the share holds across its processes, so a tenant
//   still cannot fill a pool other tenants wait for.
// Looks for a job are taken one at a time in a process, each once the last
// one's job is counted: otherwise idle workers woken together would all see
// the tenant below its share and all take its jobs.
import type { WorkerEvents } from 'graphile-worker';
import type { DatabasePool } from '../db/pool.ts';
import type { Logger } from '../core/logger.ts';
import { busyTenants, flaggedTenant, tenantFlag } from '../core/jobs/queue.ts';

// A look whose outcome event never came (graphile-worker failing between the two) must not stop every other.
const lookTimeoutMs = 5_000;
// A look that skips tenants reads past their queued jobs, so it costs as much as their backlog is long; one
// that found nothing is not repeated sooner than this, however often new jobs wake the worker.
const emptyLookPauseMs = 100;

export type TenantSlotOptions = {
  /** Slots of this process (WORKER_CONCURRENCY). */
  concurrency: number;
  /** Most jobs of one tenant at once, in all the processes of this pool (JOB_TENANT_CONCURRENCY). */
  perTenant: number;
  /** The kinds this process's pool takes (WORKER_KINDS); empty, every kind. */
  kinds?: readonly string[];
  db: DatabasePool;
  logger: Logger;
  refreshMs?: number;
  /**
   * Flags skipped beside the busy tenants' (the kinds outside this process's
   * pool, paused kinds and tenants: ./queue-gate.ts). A look that skips them
   * also reads past their backlog, and every job queued anywhere wakes every
   * worker (a video queued wakes the light pool too), so it is paced as one
   * that skips tenants.
   */
  alsoSkip?: () => readonly string[];
  /**
   * Called when a tenant read as busy across the workers is busy no more:
   * this process's slots that looked while it was, and found nothing, would
   * otherwise wait for their next poll.
   */
  onFreed?: () => void;
};

export class TenantSlots {
  readonly #perProcess: number;
  readonly #perTenant: number;
  readonly #running = new Map<string, number>();
  readonly #tenantOfJob = new Map<string, string>();
  #busyEverywhere: ReadonlySet<string> = new Set();
  #looking: Promise<void> = Promise.resolve();
  #lookDone: (() => void) | null = null;
  #timer: NodeJS.Timeout | undefined;
  #refreshing: Promise<void> = Promise.resolve();
  #skipping = false;
  #emptySkippingAt = 0;
  readonly options: TenantSlotOptions;

  constructor(options: TenantSlotOptions) {
    this.options = options;
    this.#perTenant = options.perTenant;
    this.#perProcess = Math.max(1, Math.min(options.perTenant, options.concurrency - 1));
  }

  /** Most jobs of one tenant this process runs at once. */
  get perProcess(): number {
    return this.#perProcess;
  }

  /** Counts the jobs this process starts and ends; ends a look once its outcome is known. */
  attach(events: WorkerEvents): void {
    events.on('job:start', ({ job }) => {
      const tenant = flaggedTenant(job.flags);
      if (tenant) {
        this.#tenantOfJob.set(job.id, tenant);
        this.#running.set(tenant, (this.#running.get(tenant) ?? 0) + 1);
      }
      this.#endLook();
    });
    events.on('worker:getJob:empty', () => {
      if (this.#skipping) this.#emptySkippingAt = Date.now();
      this.#endLook();
    });
    events.on('worker:getJob:error', () => this.#endLook());
    events.on('job:complete', ({ job }) => {
      const tenant = this.#tenantOfJob.get(job.id);
      if (!tenant) return;
      this.#tenantOfJob.delete(job.id);
      const left = (this.#running.get(tenant) ?? 1) - 1;
      if (left > 0) this.#running.set(tenant, left);
      else this.#running.delete(tenant);
    });
  }

  /** graphile-worker's forbiddenFlags: waits for this process's previous look to end, then names the tenants to skip. */
  forbiddenFlags = async (): Promise<string[]> => {
    const pause = this.#emptySkippingAt + emptyLookPauseMs - Date.now();
    if (pause > 0 && (this.#skipped().size > 0 || this.#alsoSkipped().length > 0))
      await new Promise((resolve) => setTimeout(resolve, pause));
    const previous = this.#looking;
    let done!: () => void;
    this.#looking = new Promise<void>((resolve) => (done = resolve));
    await previous;
    const timeout = setTimeout(() => this.#endLook(), lookTimeoutMs);
    timeout.unref();
    this.#lookDone = () => {
      clearTimeout(timeout);
      done();
    };
    const skipped = this.#skipped();
    const also = this.#alsoSkipped();
    this.#skipping = skipped.size > 0 || also.length > 0;
    return [...[...skipped].map(tenantFlag), ...also];
  };

  #alsoSkipped(): readonly string[] {
    return this.options.alsoSkip?.() ?? [];
  }

  #skipped(): Set<string> {
    const skipped = new Set(this.#busyEverywhere);
    for (const [tenant, count] of this.#running) if (count >= this.#perProcess) skipped.add(tenant);
    return skipped;
  }

  #endLook(): void {
    const done = this.#lookDone;
    this.#lookDone = null;
    done?.();
  }

  /** Reads which tenants run their share across all workers, now and every `refreshMs`. */
  async start(): Promise<void> {
    await this.#refresh();
    this.#timer = setInterval(() => {
      this.#refreshing = this.#refresh();
    }, this.options.refreshMs ?? 1_000);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    await this.#refreshing;
  }

  async #refresh(): Promise<void> {
    try {
      const before = this.#busyEverywhere;
      this.#busyEverywhere = new Set(await busyTenants(this.options.db, this.#perTenant, this.options.kinds));
      if ([...before].some((tenant) => !this.#busyEverywhere.has(tenant))) this.options.onFreed?.();
    } catch (error) {
      // Kept as last read: the per-process share still holds meanwhile.
      this.options.logger.warn({ err: (error as Error).message }, 'could not read which tenants are busy');
    }
  }
}
