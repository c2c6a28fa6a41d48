// Every model the platform knows, from each vendor's own list
// (core/providers/<vendor>/models.ts) and the local stand-ins: what it
// makes, how it is billed, and its default price. A model an operator allows
// that is not listed here (a compatible server's own) is taken as it is:
// nothing is checked of it at submit, and it is priced by its job kind.
import type { Capability } from './capabilities.ts';
import { elevenLabsModels } from './elevenlabs/models.ts';
import { falModels } from './fal/models.ts';
import type { ModelSpec } from './models.ts';
import { openaiModels } from './openai/models.ts';
import { replicateModels } from './replicate/models.ts';
import type { Vendor } from './settings.ts';

/**
 * The local stand-ins: offline and deterministic, so the service works with
 * no keys. Their results are placeholders (marked so), priced 0 unless a
 * global admin prices them.
 */
const localModels: ModelSpec[] = [
  { vendor: 'local', capability: 'image', model: 'local', unit: 'item', defaultPrice: 0, maxCount: 4 },
  { vendor: 'local', capability: 'image_edit', model: 'local', unit: 'item', defaultPrice: 0, maxCount: 1 },
  { vendor: 'local', capability: 'video', model: 'local', unit: 'second', defaultPrice: 0 },
  { vendor: 'local', capability: 'speech', model: 'local', unit: 'second', defaultPrice: 0 },
  { vendor: 'local', capability: 'text', model: 'local', unit: '1k_tokens', defaultPrice: 0 },
];

/** Which vendor makes what (whatever models it lists). */
const offers: Record<Vendor, readonly Capability[]> = {
  openai: ['image', 'image_edit', 'speech', 'text', 'embeddings'],
  replicate: ['image', 'video', 'speech'],
  fal: ['image', 'video'],
  elevenlabs: ['speech'],
  local: ['image', 'image_edit', 'video', 'speech', 'text'],
};

const catalog: ModelSpec[] = [...openaiModels, ...replicateModels, ...falModels, ...elevenLabsModels, ...localModels];

/** The vendors that make a capability, in a stable order. */
export const vendorsOffering = (capability: Capability): Vendor[] =>
  (Object.keys(offers) as Vendor[]).filter((vendor) => offers[vendor].includes(capability));

/** The model a vendor uses for a capability when the operator names none: the first it lists. */
export const defaultModel = (vendor: Vendor, capability: Capability): string | undefined =>
  catalog.find((spec) => spec.vendor === vendor && spec.capability === capability)?.model;

/** The catalog entry of a model; undefined for one the catalog does not know. */
export const modelSpec = (vendor: Vendor, capability: Capability, model: string): ModelSpec | undefined =>
  catalog.find((spec) => spec.vendor === vendor && spec.capability === capability && spec.model === model);

/** Every entry, for GET /admin/providers. */
export const allModels = (): readonly ModelSpec[] => catalog;
