// Which providers serve each capability, and how to reach each vendor, read
// from the environment once at start (core/config.ts calls this), with the
// vendors' conventional variable names:
// - a chain per capability, tried in order: IMAGE_PROVIDERS=replicate,openai,local
//   (IMAGE_EDIT_, VIDEO_, VIDEO_VARIANT_A_, VIDEO_VARIANT_B_, SPEECH_, TEXT_,
//   EMBEDDING_PROVIDERS); default `local` alone (embeddings: none);
// - each vendor's key and base URL (OPENAI_API_KEY, OPENAI_BASE_URL,
//   REPLICATE_API_TOKEN, REPLICATE_BASE_URL, FAL_KEY, FAL_QUEUE_URL,
//   ELEVENLABS_API_KEY, ELEVENLABS_BASE_URL...), every base URL overridable
//   so compatible servers and test fakes work;
// - the models a request may name, per vendor and capability, the first the
//   default: OPENAI_IMAGE_MODELS=gpt-image-2 (else the catalog's default);
// - the operator's price of a model, in credits per the unit the vendor bills:
//   OPENAI_IMAGE_PRICES=gpt-image-2=25,gpt-image-1-mini=5 (else the catalog's
//   default; LOCAL_IMAGE_PRICES=local=2 prices the stand-in, 0 by default); a
//   chat model's tokens read and written apart: OPENAI_TEXT_PRICES=gpt-5.4-mini=0.08/0.45;
// - limits per vendor: <VENDOR>_REQUESTS_PER_MINUTE, <VENDOR>_MAX_CONCURRENT.
// The variables of the single OpenAI-compatible provider this replaced
// (AI_BASE_URL, AI_API_KEY, IMAGE_PROVIDER=openai, AI_IMAGE_MODEL, ...) are
// still read where the new ones are not set, and say so in the README.
import { z } from 'zod';
import type { Capability } from './capabilities.ts';
import { defaultModel, vendorsOffering } from './catalog.ts';

export const vendors = ['openai', 'replicate', 'fal', 'elevenlabs', 'local'] as const;
export type Vendor = (typeof vendors)[number];

/** The chains the platform runs: one per capability, and one per video endpoint. */
export const chainNames = [
  'image',
  'image_edit',
  'video',
  'video_variant_a',
  'video_variant_b',
  'speech',
  'text',
  'embeddings',
] as const;
export type ChainName = (typeof chainNames)[number];

/** The capability a chain serves. */
export const capabilityOf = (chain: ChainName): Capability =>
  chain.startsWith('video') ? 'video' : (chain as Capability);

export type VendorConfig = {
  apiKey: string | undefined;
  baseUrl: string;
  /** Requests a minute and calls at once the vendor is sent, shared by every worker; 0: no limit of ours. */
  requestsPerMinute: number;
  maxConcurrent: number;
  /** Replicate: the webhook signing secret (else read from its API); fal: where its public keys are. */
  webhookSecret?: string | undefined;
  jwksUrl?: string | undefined;
};

export type ProvidersConfig = {
  chains: Record<ChainName, Vendor[]>;
  /** Per vendor and capability, the models requests may name; the first is used when none is named. */
  models: Partial<Record<Vendor, Partial<Record<Capability, string[]>>>>;
  /** Per vendor and capability, the prices the operator set (credits per unit), by model; the catalog's otherwise. */
  prices: Partial<Record<Vendor, Partial<Record<Capability, Record<string, number>>>>>;
  /** Chat models' prices per 1,000 tokens written, where the operator set them apart from those read. */
  outputPrices: Partial<Record<Vendor, Partial<Record<Capability, Record<string, number>>>>>;
  vendors: Partial<Record<Exclude<Vendor, 'local'>, VendorConfig>>;
  timeoutMs: number;
  /** The window requests a minute are counted in: a minute, shorter in benches (PROVIDER_LIMIT_WINDOW_MS). */
  limitWindowMs: number;
};

type Env = Record<string, string | undefined>;

const defaults: Record<Exclude<Vendor, 'local'>, { baseUrl: string; keyVariable: string; baseVariable: string }> = {
  openai: { baseUrl: 'https://api.openai.com/v1', keyVariable: 'OPENAI_API_KEY', baseVariable: 'OPENAI_BASE_URL' },
  replicate: {
    baseUrl: 'https://api.replicate.com',
    keyVariable: 'REPLICATE_API_TOKEN',
    baseVariable: 'REPLICATE_BASE_URL',
  },
  fal: { baseUrl: 'https://queue.fal.run', keyVariable: 'FAL_KEY', baseVariable: 'FAL_QUEUE_URL' },
  elevenlabs: {
    baseUrl: 'https://api.elevenlabs.io',
    keyVariable: 'ELEVENLABS_API_KEY',
    baseVariable: 'ELEVENLABS_BASE_URL',
  },
};

/** The variable naming a chain: IMAGE_PROVIDERS, VIDEO_VARIANT_A_PROVIDERS, EMBEDDING_PROVIDERS... */
export const chainVariable = (chain: ChainName) =>
  `${chain === 'embeddings' ? 'EMBEDDING' : chain.toUpperCase()}_PROVIDERS`;

/** The variable naming a vendor's models for a capability: OPENAI_IMAGE_MODELS, ELEVENLABS_SPEECH_MODELS... */
export const modelsVariable = (vendor: Vendor, capability: Capability) =>
  `${vendor.toUpperCase()}_${capability === 'embeddings' ? 'EMBEDDING' : capability.toUpperCase()}_MODELS`;

/** The variable pricing a vendor's models for a capability: OPENAI_IMAGE_PRICES, LOCAL_SPEECH_PRICES... */
export const pricesVariable = (vendor: Vendor, capability: Capability) =>
  modelsVariable(vendor, capability).replace(/_MODELS$/, '_PRICES');

const listOf = (value: string | undefined) =>
  (value ?? '')
    .split(',')
    .map((item) => item.trim())
    .filter(Boolean);

/** What the variables of the single OpenAI-compatible provider said, as chains (undefined: they said nothing). */
function legacyChain(chain: ChainName, env: Env, problems: string[]): string | undefined {
  const pick = (variable: string, map: Record<string, string>) => {
    const value = env[variable];
    if (value === undefined) return undefined;
    const chosen = map[value];
    if (chosen === undefined)
      problems.push(`${variable}: ${value} is retired; name the providers in ${chainVariable(chain)} instead`);
    return chosen;
  };
  switch (chain) {
    case 'image':
    case 'image_edit':
      return pick('IMAGE_PROVIDER', { local: 'local', openai: 'openai' });
    case 'speech':
      return pick('SPEECH_PROVIDER', { local: 'local', openai: 'openai' });
    case 'text':
      return pick('TEXT_PROVIDER', { local: 'local', openai: 'openai' });
    case 'embeddings':
      return env.AI_EMBEDDING_MODEL ? 'openai' : undefined;
    case 'video':
      return pick('VIDEO_PROVIDER', { local: 'local' });
    case 'video_variant_a':
      return pick('VIDEO_VARIANT_A_PROVIDER', { local: 'local' });
    case 'video_variant_b':
      return pick('VIDEO_VARIANT_B_PROVIDER', { local: 'local' });
  }
}

const legacyModels: Partial<Record<Capability, string>> = {
  image: 'AI_IMAGE_MODEL',
  speech: 'AI_SPEECH_MODEL',
  text: 'AI_TEXT_MODEL',
  embeddings: 'AI_EMBEDDING_MODEL',
};

const defaultChains: Record<ChainName, string> = {
  image: 'local',
  image_edit: 'local',
  video: 'local',
  // The variants name a vendor's video model each; with none configured they compose locally.
  video_variant_a: 'local',
  video_variant_b: 'local',
  speech: 'local',
  text: 'local',
  embeddings: '',
};

const count = z.coerce.number().int().min(0);

/** Credits per unit, as the global price list takes them (core/credits/price-list.ts). */
const price = z.coerce.number().min(0).max(1_000_000);

type ModelPrices = { prices: Record<string, number>; outputPrices: Record<string, number> };

/**
 * `model=price` pairs: a model's name may hold `:` and `/` (Replicate's
 * owner/name:version), never `=`. A chat model may have two prices,
 * `model=read/written` per 1,000 tokens; one price is both.
 */
function readPrices(variable: string, value: string | undefined, twoPrices: boolean, problems: string[]): ModelPrices {
  const found: ModelPrices = { prices: {}, outputPrices: {} };
  const shape = twoPrices ? 'model=credits or model=input/output credits' : 'model=credits';
  for (const pair of listOf(value)) {
    const [model, amount, ...rest] = pair.split('=').map((part) => part.trim());
    const amounts = (amount ?? '').split('/');
    const parsed = amounts.map((one) => price.safeParse(one.trim() === '' ? undefined : one));
    if (!model || rest.length > 0 || amounts.length > (twoPrices ? 2 : 1) || parsed.some((one) => !one.success))
      problems.push(`${variable}: ${pair} is not ${shape} (numbers from 0 to 1000000)`);
    else {
      found.prices[model] = parsed[0]!.data!;
      if (parsed[1]) found.outputPrices[model] = parsed[1].data!;
    }
  }
  return found;
}

/**
 * The providers' configuration, or the problems with it, each a line
 * `VARIABLE: what is wrong` for ConfigError.
 */
export function readProviders(
  env: Env,
  options: { publicUrl: string | undefined; timeoutMs: number },
): { providers: ProvidersConfig; problems: string[] } {
  const problems: string[] = [];
  const vendorConfigs: ProvidersConfig['vendors'] = {};
  for (const vendor of Object.keys(defaults) as (keyof typeof defaults)[]) {
    const { baseUrl, keyVariable, baseVariable } = defaults[vendor];
    const upper = vendor.toUpperCase();
    // The single OpenAI-compatible provider's variables stand for OpenAI's where OpenAI's are not set.
    const legacy = vendor === 'openai' ? { key: env.AI_API_KEY, base: env.AI_BASE_URL } : {};
    const base = env[baseVariable] ?? legacy.base;
    if (base !== undefined && !z.url({ protocol: /^https?$/ }).safeParse(base).success)
      problems.push(`${baseVariable}: must be an http(s) URL`);
    const limits = {
      requestsPerMinute: count.safeParse(env[`${upper}_REQUESTS_PER_MINUTE`] ?? 0),
      maxConcurrent: count.safeParse(env[`${upper}_MAX_CONCURRENT`] ?? 0),
    };
    for (const [name, parsed] of Object.entries(limits))
      if (!parsed.success)
        problems.push(
          `${upper}_${name === 'maxConcurrent' ? 'MAX_CONCURRENT' : 'REQUESTS_PER_MINUTE'}: must be a whole number`,
        );
    vendorConfigs[vendor] = {
      apiKey: env[keyVariable] ?? legacy.key,
      baseUrl: (base ?? baseUrl).replace(/\/$/, ''),
      requestsPerMinute: limits.requestsPerMinute.data ?? 0,
      maxConcurrent: limits.maxConcurrent.data ?? 0,
      ...(vendor === 'replicate' ? { webhookSecret: env.REPLICATE_WEBHOOK_SECRET } : {}),
      ...(vendor === 'fal' ? { jwksUrl: env.FAL_JWKS_URL ?? 'https://rest.alpha.fal.ai/.well-known/jwks.json' } : {}),
    };
  }

  const chains = {} as Record<ChainName, Vendor[]>;
  const models: ProvidersConfig['models'] = {};
  const prices: ProvidersConfig['prices'] = {};
  const outputPrices: ProvidersConfig['outputPrices'] = {};
  for (const chain of chainNames) {
    const variable = chainVariable(chain);
    const capability = capabilityOf(chain);
    const named = listOf(env[variable] ?? legacyChain(chain, env, problems) ?? defaultChains[chain]);
    const offering = vendorsOffering(capability);
    const chosen: Vendor[] = [];
    for (const name of named) {
      if (!(vendors as readonly string[]).includes(name) || !offering.includes(name as Vendor)) {
        problems.push(`${variable}: ${name} does not make ${capability}; one of ${offering.join(', ')}`);
        continue;
      }
      const vendor = name as Vendor;
      if (chosen.includes(vendor)) problems.push(`${variable}: ${vendor} is named twice`);
      else chosen.push(vendor);
      if (vendor === 'local') continue;
      const settings = vendorConfigs[vendor]!;
      const configured = settings.apiKey !== undefined || settings.baseUrl !== defaults[vendor].baseUrl;
      if (!configured) problems.push(`${variable}: ${vendor} needs ${defaults[vendor].keyVariable}`);
      if ((vendor === 'replicate' || vendor === 'fal') && !options.publicUrl)
        problems.push(`${variable}: ${vendor} delivers by webhook, which needs PUBLIC_URL`);
    }
    if (chosen.length > 1 && chosen.indexOf('local') >= 0 && chosen.indexOf('local') !== chosen.length - 1)
      problems.push(`${variable}: local comes last, the placeholder when the vendors before it cannot`);
    chains[chain] = chosen;
    for (const vendor of chosen) {
      const variableForModels = modelsVariable(vendor, capability);
      const legacy = vendor === 'openai' ? env[legacyModels[capability] ?? ''] : undefined;
      const listed = listOf(env[variableForModels] ?? legacy);
      const fallback = defaultModel(vendor, capability);
      const allowed = listed.length ? listed : fallback ? [fallback] : [];
      if (!allowed.length) problems.push(`${variableForModels}: name at least one model`);
      (models[vendor] ??= {})[capability] = allowed;
      const variableForPrices = pricesVariable(vendor, capability);
      const read = readPrices(variableForPrices, env[variableForPrices], capability === 'text', problems);
      const priced = read.prices;
      for (const model of Object.keys(priced))
        if (!allowed.includes(model))
          problems.push(`${variableForPrices}: ${model} is not one of ${variableForModels} (${allowed.join(', ')})`);
      (prices[vendor] ??= {})[capability] = priced;
      (outputPrices[vendor] ??= {})[capability] = read.outputPrices;
    }
  }
  const window = count.safeParse(env.PROVIDER_LIMIT_WINDOW_MS ?? 60_000);
  if (!window.success || window.data < 1000) problems.push('PROVIDER_LIMIT_WINDOW_MS: at least 1000');
  const limitWindowMs = window.data ?? 60_000;
  return {
    providers: {
      chains,
      models,
      prices,
      outputPrices,
      vendors: vendorConfigs,
      timeoutMs: options.timeoutMs,
      limitWindowMs,
    },
    problems,
  };
}
