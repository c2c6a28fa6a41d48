// Each vendor's adapter for a capability, made once per configuration (their
// clients keep connections), and the vendors that call back with their
// webhook verifier and cancel. The local stand-ins are the worker's own
// (worker/providers), asked for by the job handlers where a plan names `local`.
import type { Config } from '../config.ts';
import { permanent } from '../jobs/errors.ts';
import type { AdapterOf, Capability, VendorSettings } from './capabilities.ts';
import { elevenLabsSpeech } from './elevenlabs/speech.ts';
import { falImages } from './fal/images.ts';
import { falVideo } from './fal/video.ts';
import { falCancelRef, falWebhooks } from './fal/webhooks.ts';
import { openaiChat } from './openai/chat.ts';
import { openaiEmbeddings } from './openai/embeddings.ts';
import { openaiImageEdits } from './openai/image-edits.ts';
import { openaiImages } from './openai/images.ts';
import { openaiSpeech } from './openai/speech.ts';
import { replicateImages } from './replicate/images.ts';
import { replicateSpeech } from './replicate/speech.ts';
import { replicateVideo } from './replicate/video.ts';
import { replicateWebhooks } from './replicate/webhooks.ts';
import type { AsyncVendor } from './webhooks.ts';
import type { Vendor } from './settings.ts';

export type RemoteVendor = Exclude<Vendor, 'local'>;

type Factories = { [C in Capability]?: (settings: VendorSettings) => AdapterOf[C] };

const factories: Record<RemoteVendor, Factories> = {
  openai: {
    image: openaiImages,
    image_edit: openaiImageEdits,
    speech: openaiSpeech,
    text: openaiChat,
    embeddings: openaiEmbeddings,
  },
  replicate: { image: replicateImages, video: replicateVideo, speech: replicateSpeech },
  fal: { image: falImages, video: falVideo },
  elevenlabs: { speech: elevenLabsSpeech },
};

/** How to reach a vendor, from the configuration. */
export function settingsOf(config: Pick<Config, 'providers'>, vendor: RemoteVendor): VendorSettings {
  const settings = config.providers.vendors[vendor];
  if (!settings) throw permanent('not_configured', `${vendor} is not configured.`);
  return { apiKey: settings.apiKey, baseUrl: settings.baseUrl, timeoutMs: config.providers.timeoutMs };
}

const made = new WeakMap<object, Map<string, unknown>>();

/** One instance per configuration and key: adapters hold clients (connections, a fetched secret). */
function once<T>(config: Pick<Config, 'providers'>, key: string, make: () => T): T {
  let instances = made.get(config.providers);
  if (!instances) made.set(config.providers, (instances = new Map<string, unknown>()));
  if (!instances.has(key)) instances.set(key, make());
  return instances.get(key) as T;
}

/** The vendor's adapter for the capability; not_configured when it offers none. */
export function adapterFor<C extends Capability>(
  config: Pick<Config, 'providers'>,
  capability: C,
  vendor: RemoteVendor,
): AdapterOf[C] {
  const factory = factories[vendor][capability];
  if (!factory) throw permanent('not_configured', `${vendor} makes no ${capability}.`);
  return once(config, `${vendor}:${capability}`, () => factory(settingsOf(config, vendor)));
}

/** The vendors that take work and call back, by name; undefined for one that does not. */
export function asyncVendorFor(config: Pick<Config, 'providers'>, vendor: string): AsyncVendor | undefined {
  if (vendor === 'replicate') {
    const settings = config.providers.vendors.replicate;
    return once(config, 'replicate:webhooks', () =>
      replicateWebhooks(settingsOf(config, 'replicate'), { secret: settings?.webhookSecret }),
    );
  }
  if (vendor === 'fal')
    return once(config, 'fal:webhooks', () =>
      falWebhooks({ ...settingsOf(config, 'fal'), jwksUrl: config.providers.vendors.fal?.jwksUrl }),
    );
  return undefined;
}

/**
 * Asks the vendor to stop work it holds for a canceled job. fal's cancel
 * needs the model's app besides its id for the work; Replicate's the id alone.
 */
export async function cancelWork(
  config: Pick<Config, 'providers'>,
  work: { provider: string; ref: string; model: string | null },
  signal: AbortSignal,
): Promise<boolean> {
  const vendor = asyncVendorFor(config, work.provider);
  if (!vendor) return false;
  if (work.provider === 'fal' && !work.model) throw permanent('provider_rejected', 'fal needs the model to cancel.');
  await vendor.cancel(work.provider === 'fal' ? falCancelRef(work.model!, work.ref) : work.ref, signal);
  return true;
}
