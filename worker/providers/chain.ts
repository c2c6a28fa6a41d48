// A job's plan run in turn (core/providers/plan.ts): each provider is called
// until one answers. One that answers 429 or 5xx, times out or cannot be
// reached passes the job on to the next, and so does one with no free slot
// (core/providers/limits.ts: its limit, or the wait its 429 named); the
// last one's failure is the job's, so the job is retried after the
// Retry-After it named (the runner's backoff), or waits for its slot. A
// refusal of the input (a 4xx) fails the job at once: the next provider
// would be asked the same thing. Each call is recorded (provider_calls),
// whatever became of it (in the background: worker/background.ts).
import type { Capability } from '../../core/providers/capabilities.ts';
import { recordProviderCall, type CallOutcome } from '../../core/providers/calls.ts';
import { Deferred, JobError } from '../../core/jobs/errors.ts';
import { blockVendor, takeSlot } from '../../core/providers/limits.ts';
import type { PlannedCall } from '../../core/providers/plan.ts';
import type { JobContext } from '../job.ts';

export type Answered<T> = { value: T; call: PlannedCall };

/** How long a vendor's 429 that named no wait holds everyone off. */
const defaultBlockMs = 5000;

/** A slot of the vendor's limits (core/providers/limits.ts); the local stand-ins have none. */
function slotFor(call: PlannedCall, context: Pick<JobContext, 'db' | 'job' | 'config'>) {
  if (call.vendor === 'local') return Promise.resolve({ slot: { release: async () => undefined } });
  const { providers } = context.config;
  return takeSlot(context.db, call.vendor, providers.vendors[call.vendor]!, {
    jobId: context.job.id,
    timeoutMs: providers.timeoutMs,
    windowMs: providers.limitWindowMs,
  });
}

/** Whether a failure passes the job on to the next provider of its plan. */
const passesOn = (error: unknown) => error instanceof JobError && (error.transient || error.code === 'not_configured');

export async function inTurn<T>(
  capability: Capability,
  plan: PlannedCall[],
  context: Pick<JobContext, 'db' | 'job' | 'signal' | 'progress' | 'config' | 'background'>,
  attempt: (call: PlannedCall) => Promise<T>,
  outcomeOf: (value: T) => CallOutcome = () => 'succeeded',
): Promise<Answered<T>> {
  let last: unknown;
  for (const [index, call] of plan.entries()) {
    const startedAt = new Date();
    // The record goes out behind the work (worker/background.ts): the next step need not wait for it.
    const record = (outcome: CallOutcome, error?: unknown) =>
      context.background.add('provider calls', () =>
        recordProviderCall(context.db, context.job, {
          capability,
          vendor: call.vendor,
          model: call.model,
          startedAt,
          durationMs: Date.now() - startedAt.getTime(),
          outcome,
          errorCode: error instanceof JobError ? error.code : error === undefined ? undefined : 'internal_error',
          httpStatus: error instanceof JobError ? error.status : undefined,
        }),
      );
    if (index > 0) await context.progress(0.1, `trying ${call.vendor} after ${plan[index - 1]!.vendor}`);
    const taken = await slotFor(call, context);
    if ('waitMs' in taken) {
      // No free slot (its limit, or the wait its own 429 named): as after a 429, the next provider is
      // asked; the last one is waited for. Not a call: nothing is recorded for it.
      const deferred = new Deferred(taken.waitMs, `waiting for ${taken.reason}`);
      if (index === plan.length - 1) throw deferred;
      last = deferred;
      continue;
    }
    try {
      const value = await attempt(call).finally(() => taken.slot.release());
      record(outcomeOf(value));
      return { value, call };
    } catch (error) {
      // The vendor's 429 holds for every worker: none sends it more before the wait it named.
      if (error instanceof JobError && error.status === 429)
        await blockVendor(context.db, call.vendor, error.retryAfterMs ?? defaultBlockMs);
      if (context.signal.aborted) {
        record('canceled');
        throw error;
      }
      const next = passesOn(error) && index < plan.length - 1;
      record(next ? 'passed_on' : 'failed', error);
      if (!next) throw error;
      last = error;
    }
  }
  throw last;
}
