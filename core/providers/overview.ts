// What GET /admin/providers shows an operator: each chain (capability or
// video endpoint) with its providers in order, the models each allows and
// what the catalog knows of them (sizes, lengths, billing unit, default
// price), each vendor's settings that are not secret, and its last hour
// (calls, failures, latency, last errors) from provider_calls.
import { z } from 'zod';
import type { CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';
import type { Config } from '../config.ts';
import { requireGlobalAdmin } from '../identity/access.ts';
import { vendorHealth, vendorHealthSchema } from './calls.ts';
import { modelSpec } from './catalog.ts';
import { describeSizes } from './models.ts';
import { modelPrice } from './prices.ts';
import { capabilityOf, chainNames, chainVariable, modelsVariable, pricesVariable } from './settings.ts';

const modelSchema = z.object({
  model: z.string(),
  known: z.boolean().describe('Whether the catalog knows it (its sizes and lengths are checked at submit)'),
  unit: z.string().nullable().describe('What the vendor bills: item, second, 1k_characters, 1k_tokens'),
  default_price: z.number().nullable().describe('Credits per unit the catalog suggests'),
  price: z
    .number()
    .nullable()
    .describe(
      'Credits per unit a job on this model is charged (before a site’s own price of the kind): the operator’s ' +
        '(price_variable), else the catalog’s; null: priced as its job kind',
    ),
  output_price: z
    .number()
    .nullable()
    .describe('A chat model’s credits per 1,000 tokens it writes (`price` is per 1,000 it reads); null: the same'),
  price_source: z.enum(['configured', 'catalog']).nullable(),
  sizes: z.string().nullable(),
  seconds: z.array(z.number()).nullable(),
  max_characters: z.number().nullable(),
  note: z.string().nullable(),
});

export const providersOverviewSchema = z
  .object({
    chains: z.array(
      z.object({
        chain: z.enum(chainNames),
        variable: z.string().describe('The variable that names its providers'),
        capability: z.string(),
        providers: z.array(
          z.object({
            vendor: z.string(),
            models_variable: z.string().nullable(),
            price_variable: z.string().describe('The variable that prices its models: model=credits, comma-separated'),
            placeholder: z.boolean().describe('The local stand-in: its results are marked placeholder'),
            models: z.array(modelSchema).describe('The models requests may name; the first when none is named'),
          }),
        ),
      }),
    ),
    vendors: z.array(
      z.object({
        vendor: z.string(),
        configured: z.boolean(),
        base_url: z.string(),
        requests_per_minute: z.number().int().describe('0: no limit of ours'),
        max_concurrent: z.number().int(),
        last_hour: vendorHealthSchema.omit({ vendor: true }).nullable(),
      }),
    ),
  })
  .meta({ id: 'ProvidersOverview' });

export async function providersOverview(db: CommonQueryMethods, actor: Actor, config: Pick<Config, 'providers'>) {
  requireGlobalAdmin(actor);
  const { providers } = config;
  const health = new Map((await vendorHealth(db)).map((row) => [row.vendor, row]));
  const chains = chainNames.map((chain) => {
    const capability = capabilityOf(chain);
    return {
      chain,
      variable: chainVariable(chain),
      capability,
      providers: providers.chains[chain].map((vendor) => ({
        vendor,
        models_variable: vendor === 'local' ? null : modelsVariable(vendor, capability),
        price_variable: pricesVariable(vendor, capability),
        placeholder: vendor === 'local',
        models: (providers.models[vendor]?.[capability] ?? []).map((model) => {
          const spec = modelSpec(vendor, capability, model);
          const price = modelPrice(providers, capability, vendor, model);
          return {
            model,
            known: spec !== undefined,
            unit: price?.unit ?? spec?.unit ?? null,
            default_price: spec?.defaultPrice ?? null,
            price: price?.unit_price ?? null,
            output_price: price?.output_unit_price ?? null,
            price_source: price?.source ?? null,
            sizes: spec?.sizes ? describeSizes(spec.sizes) : null,
            seconds: spec?.seconds ? [...spec.seconds] : null,
            max_characters: spec?.maxCharacters ?? null,
            note: spec?.note ?? null,
          };
        }),
      })),
    };
  });
  const vendors = Object.entries(providers.vendors).map(([vendor, settings]) => {
    const { vendor: _vendor, ...lastHour } = health.get(vendor) ?? { vendor };
    return {
      vendor,
      configured: settings.apiKey !== undefined,
      base_url: settings.baseUrl,
      requests_per_minute: settings.requestsPerMinute,
      max_concurrent: settings.maxConcurrent,
      last_hour: health.has(vendor) ? (lastHour as z.infer<typeof vendorHealthSchema>) : null,
    };
  });
  return { chains, vendors };
}
