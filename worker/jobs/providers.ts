// What every generating job needs of its plan: where an asynchronous vendor
// posts its webhook for the job, and which planned call a delivered result
// belongs to (the job's provider, with the model the plan asked of it).
import { permanent } from '../../core/jobs/errors.ts';
import type { Capability } from '../../core/providers/capabilities.ts';
import type { PlannedCall } from '../../core/providers/plan.ts';
import { vendors, type Vendor } from '../../core/providers/settings.ts';
import type { JobContext } from '../job.ts';

/**
 * The site's webhook endpoint, naming the vendor and the job: the job is
 * found by it even when the webhook comes before the vendor's id for the work
 * was recorded. Only vendors that call back get one.
 */
export function webhookUrl(context: Pick<JobContext, 'config' | 'job'>, vendor: Vendor): string | undefined {
  if (vendor !== 'replicate' && vendor !== 'fal') return undefined;
  const { config, job } = context;
  return `${config.publicUrl}/${job.site_id}/media/webhook/mediaprovider?provider=${vendor}&job=${job.id}`;
}

/** The planned call a delivered result belongs to: the vendor the job waited for, and the model asked of it. */
export function callOf(
  plan: PlannedCall[] | undefined,
  context: Pick<JobContext, 'config' | 'job'>,
  capability: Capability,
): PlannedCall & { vendor: Exclude<Vendor, 'local'> } {
  const vendor = context.job.provider;
  if (!vendor || vendor === 'local' || !(vendors as readonly string[]).includes(vendor))
    throw permanent('provider_invalid_response', 'A result was delivered for a job that waited for no provider.');
  const model =
    plan?.find((call) => call.vendor === vendor)?.model ??
    context.config.providers.models[vendor as Vendor]?.[capability]?.[0];
  if (!model) throw permanent('not_configured', `${vendor} has no model for ${capability} any more.`);
  return { vendor: vendor as Exclude<Vendor, 'local'>, model };
}
