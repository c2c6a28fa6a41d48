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

export type ModelPrice = { unit: BillingUnit; unit_price: number; source: 'configured' | 'catalog' };

/** The price of a model, configured or the catalog's; undefined when neither knows it. */
export function modelPrice(
  providers: Pick<ProvidersConfig, 'prices'>,
  capability: Capability,
  vendor: Vendor,
  model: string,
): ModelPrice | undefined {
  const spec = modelSpec(vendor, capability, model);
  const configured = providers.prices[vendor]?.[capability]?.[model];
  if (configured !== undefined)
    return { unit: spec?.unit ?? usualUnit[capability], unit_price: configured, source: 'configured' };
  if (spec) return { unit: spec.unit, unit_price: spec.defaultPrice, source: 'catalog' };
  return undefined;
}
