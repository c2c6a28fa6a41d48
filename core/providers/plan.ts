// Which providers a job will try, decided when it is submitted and kept in its
// input, so the worker runs what was checked and priced: the capability's
// chain, narrowed to the model the request names (one the operator allows, or
// a 422 naming those it does) and to the providers whose model can make what
// was asked (an image size: a 422 naming the sizes the first one makes).
import { z } from 'zod';
import { Problem, problemType } from '../errors.ts';
import type { Capability } from './capabilities.ts';
import { allModels, modelSpec } from './catalog.ts';
import { describeSizes, makesSize, type ModelSpec } from './models.ts';
import { modelPrice } from './prices.ts';
import { capabilityOf, chainVariable, type ChainName, type ProvidersConfig } from './settings.ts';

/**
 * One provider of a plan, the model it is asked for, and what the job is
 * charged a unit should it make the result (set at submit; absent on jobs
 * submitted before models had prices, which are charged their kind's price).
 */
export const plannedCall = z.object({
  vendor: z.enum(['openai', 'replicate', 'fal', 'elevenlabs', 'local']),
  model: z.string().min(1).max(200),
  unit: z.enum(['item', 'second', '1k_characters', '1k_tokens']).optional(),
  unit_price: z.number().min(0).optional(),
  /** A chat model's price per 1,000 tokens it writes, when it differs from those it reads (`unit_price`). */
  output_unit_price: z.number().min(0).optional(),
});
export type PlannedCall = z.infer<typeof plannedCall>;

/** A job's plan, as its input keeps it (absent on jobs submitted before plans: planned again when run). */
export const planField = z.array(plannedCall).min(1).max(10).optional();

/**
 * A request's `model`, described with the models the platform knows for the
 * capability, so the document lists them; which of them a deployment allows
 * is its operator's choice (GET /admin/providers).
 */
export const modelField = (capability: Capability) =>
  z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe(
      'A model the operator allows for this capability (GET /admin/providers lists those allowed here, with their prices); ' +
        'the first allowed when absent. The models the platform knows: ' +
        allModels()
          .filter((spec) => spec.capability === capability && spec.vendor !== 'local')
          .map((spec) => `${spec.model} (${spec.vendor})`)
          .join(', ') +
        '; a compatible server’s own models when the operator allows them.',
    );

/** The spec of a planned call; undefined for a model the catalog does not know (a compatible server's own). */
export const specOf = (capability: Capability, call: PlannedCall): ModelSpec | undefined =>
  modelSpec(call.vendor, capability, call.model);

/** Every model a chain's providers allow, for a 422 or a description. */
export function allowedModels(config: ProvidersConfig, chain: ChainName): string[] {
  const capability = capabilityOf(chain);
  return [...new Set(config.chains[chain].flatMap((vendor) => config.models[vendor]?.[capability] ?? []))];
}

export type PlanOptions = {
  /** The model the request names, and where it named it (for the 422). */
  model?: string | undefined;
  modelPath?: string;
  /** An image or video size the providers must make, and where the request named it. */
  size?: { width: number; height: number; path: string } | undefined;
};

/**
 * A text job's plan (a post transform, SEO text), priced per 1,000 tokens:
 * none when TEXT_PROVIDERS names nothing, so the job is priced as its kind
 * and written by the built-in algorithms.
 */
export function textPlan(config: ProvidersConfig, tokens: number) {
  if (config.chains.text.length === 0) return undefined;
  const calls = planFor(config, 'text');
  return { calls, estimate: { '1k_tokens': Math.max(1, Math.ceil(tokens / 1000)) } };
}

/**
 * The plan for a request on a chain: each provider of the chain with the
 * model asked for (or its default), keeping those that can do what was asked.
 * 422 when the model is not allowed, or no provider can make the size; 503
 * when the chain is empty (nothing configured makes this).
 */
export function planFor(config: ProvidersConfig, chain: ChainName, options: PlanOptions = {}): PlannedCall[] {
  const capability = capabilityOf(chain);
  const vendors = config.chains[chain];
  if (vendors.length === 0)
    throw new Problem(503, `No provider makes ${capability}: set ${chainVariable(chain)}.`, {
      type: problemType('not-configured'),
      title: 'Not configured',
    });
  const candidates = vendors.flatMap((vendor): PlannedCall[] => {
    const models = config.models[vendor]?.[capability] ?? [];
    const model = options.model ?? models[0];
    if (model === undefined || !models.includes(model)) return [];
    const price = modelPrice(config, capability, vendor, model);
    return [
      {
        vendor,
        model,
        ...(price && { unit: price.unit, unit_price: price.unit_price }),
        ...(price?.output_unit_price !== undefined && { output_unit_price: price.output_unit_price }),
      },
    ];
  });
  if (candidates.length === 0) {
    const allowed = allowedModels(config, chain);
    throw new Problem(422, `The model ${options.model} is not one of those allowed: ${allowed.join(', ')}.`, {
      errors: [{ path: options.modelPath ?? 'body.model', message: `one of ${allowed.join(', ')}` }],
    });
  }
  const { size } = options;
  if (!size) return candidates;
  const making = candidates.filter((call) => {
    const sizes = specOf(capability, call)?.sizes;
    return sizes === undefined || makesSize(sizes, size.width, size.height);
  });
  if (making.length === 0) {
    const first = candidates[0]!;
    const sizes = specOf(capability, first)!.sizes!;
    throw new Problem(422, `${first.model} does not make ${size.width}x${size.height} pictures.`, {
      errors: [{ path: size.path, message: `${first.model} makes ${describeSizes(sizes)}` }],
    });
  }
  return making;
}
