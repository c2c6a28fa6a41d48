// What a call to a provider costs the tenant: the operator's price of the
// model (core/providers/settings.ts, <VENDOR>_<CAPABILITY>_PRICES), else the
// catalog's default, in the unit the vendor bills. A model the catalog does
// not know and the operator did not price is priced as its job kind
// (core/credits/prices.ts), the way every job was before models had prices.
import type { Capability } from './capabilities.ts';
import { modelSpec } from './catalog.ts';
import type { BillingUnit } from './models.ts';
import type { ProvidersConfig, Vendor } from './settings.ts';

/** What an unknown model a compatible server offers is billed by, when the operator prices it. */
const usualUnit: Record<Capability, BillingUnit> = {
  image: 'item',
  image_edit: 'item',
  video: 'second',
  speech: '1k_characters',
  text: '1k_tokens',
  embeddings: '1k_tokens',
};

export type ModelPrice = {
  unit: BillingUnit;
  unit_price: number;
  /** A chat model's price per 1,000 tokens written (`unit_price` is per 1,000 read); absent: the same. */
  output_unit_price?: number | undefined;
  source: 'configured' | 'catalog';
};

/** The price of a model, configured or the catalog's; undefined when neither knows it. */
export function modelPrice(
  providers: Pick<ProvidersConfig, 'prices' | 'outputPrices'>,
  capability: Capability,
  vendor: Vendor,
  model: string,
): ModelPrice | undefined {
  const spec = modelSpec(vendor, capability, model);
  const configured = providers.prices[vendor]?.[capability]?.[model];
  if (configured !== undefined) {
    const output = providers.outputPrices[vendor]?.[capability]?.[model];
    return {
      unit: spec?.unit ?? usualUnit[capability],
      unit_price: configured,
      ...(output !== undefined && { output_unit_price: output }),
      source: 'configured',
    };
  }
  if (spec)
    return {
      unit: spec.unit,
      unit_price: spec.defaultPrice,
      ...(spec.outputPrice !== undefined && { output_unit_price: spec.outputPrice }),
      source: 'catalog',
    };
  return undefined;
}

export type TokenUsage = { inputTokens: number; outputTokens: number };

/** What a model call's tokens cost in credits (not rounded): those read and those written, each at its price. */
export const tokenCost = (
  call: { unit_price?: number | undefined; output_unit_price?: number | undefined },
  usage: TokenUsage,
) =>
  (usage.inputTokens / 1000) * (call.unit_price ?? 0) +
  (usage.outputTokens / 1000) * (call.output_unit_price ?? call.unit_price ?? 0);

/** The most a token of the call may cost: what a reservation of tokens is made at. */
export const dearestTokenPrice = (call: { unit_price: number; output_unit_price?: number | undefined }) =>
  Math.max(call.unit_price, call.output_unit_price ?? 0);
