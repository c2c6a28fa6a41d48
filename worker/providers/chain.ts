// A job's plan run in turn (core/providers/plan.ts): each provider is called
// until one answers. One that answers 429 or 5xx, times out or cannot be
// reached passes the job on to the next; the last one's failure is the
// job's, so the job is retried after the Retry-After it named (the runner's
// backoff). A refusal of the input (a 4xx) fails the job at once: the next
// provider would be asked the same thing. Each call is recorded
// (provider_calls), whatever became of it.
import type { Capability } from '../../core/providers/capabilities.ts';
import { recordProviderCall, type CallOutcome } from '../../core/providers/calls.ts';
import { JobError } from '../../core/jobs/errors.ts';
import type { PlannedCall } from '../../core/providers/plan.ts';
import type { JobContext } from '../jobs/handler.ts';

export type Answered<T> = { value: T; call: PlannedCall };

/** Whether a failure passes the job on to the next provider of its plan. */
const passesOn = (error: unknown) => error instanceof JobError && (error.transient || error.code === 'not_configured');

export async function inTurn<T>(
  capability: Capability,
  plan: PlannedCall[],
  context: Pick<JobContext, 'db' | 'job' | 'signal' | 'progress'>,
  attempt: (call: PlannedCall) => Promise<T>,
  outcomeOf: (value: T) => CallOutcome = () => 'succeeded',
): Promise<Answered<T>> {
  let last: unknown;
  for (const [index, call] of plan.entries()) {
    const startedAt = new Date();
    const record = (outcome: CallOutcome, error?: unknown) =>
      recordProviderCall(context.db, context.job, {
        capability,
        vendor: call.vendor,
        model: call.model,
        startedAt,
        durationMs: Date.now() - startedAt.getTime(),
        outcome,
        errorCode: error instanceof JobError ? error.code : error === undefined ? undefined : 'internal_error',
        httpStatus: error instanceof JobError ? error.status : undefined,
      });
    if (index > 0) await context.progress(0.1, `trying ${call.vendor} after ${plan[index - 1]!.vendor}`);
    try {
      const value = await attempt(call);
      await record(outcomeOf(value));
      return { value, call };
    } catch (error) {
      if (context.signal.aborted) {
        await record('canceled').catch(() => undefined);
        throw error;
      }
      const next = passesOn(error) && index < plan.length - 1;
      await record(next ? 'passed_on' : 'failed', error);
      if (!next) throw error;
      last = error;
    }
  }
  throw last;
}
