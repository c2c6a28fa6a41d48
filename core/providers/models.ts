// What each model a vendor offers can do and how the vendor bills it: the
// catalog the platform checks a request against at submit (a size the model
// cannot make is a 422 naming those it can) and prices jobs by. Each vendor
// lists its own models beside its adapters (core/providers/<vendor>/models.ts),
// from the vendor's reference; an operator may allow a model the catalog does
// not know (a compatible server's), which then gets its capability's
// `generic` rules.
import type { Capability } from './capabilities.ts';

/** What a unit of a model's work is, as the vendor bills it (core/credits/prices.ts units). */
export type BillingUnit = 'item' | 'second' | '1k_characters' | '1k_tokens';

/** Sizes a model makes: a list, or a rule (any width and height on a grid, within a ratio and a bound). */
export type Sizes =
  | { list: readonly string[] }
  | {
      multipleOf: number;
      minRatio: number;
      maxRatio: number;
      maxWidth: number;
      maxHeight: number;
      minPixels?: number;
      maxPixels?: number;
    };

export type ModelSpec = {
  vendor: string;
  capability: Capability;
  model: string;
  unit: BillingUnit;
  /**
   * Credits per unit unless the operator sets another price (GET /admin/providers shows both). For a chat
   * model, per 1,000 tokens it reads; `outputPrice` is per 1,000 it writes.
   */
  defaultPrice: number;
  /** Chat: credits per 1,000 tokens the model writes, which vendors bill at several times what it reads. */
  outputPrice?: number | undefined;
  /** Images and video: the sizes it makes. */
  sizes?: Sizes | undefined;
  /** Images: the most made by one call. */
  maxCount?: number | undefined;
  /** Video: the lengths it makes, in seconds (the nearest at or above what was asked is taken). */
  seconds?: readonly number[] | undefined;
  /** Speech and text: the longest input it takes, in characters. */
  maxCharacters?: number | undefined;
  /** Say why, where the reference says so (a retirement date, a preview). */
  note?: string | undefined;
};

const parse = (size: string) => {
  const match = /^(\d{1,5})x(\d{1,5})$/.exec(size);
  return match ? { width: Number(match[1]), height: Number(match[2]) } : undefined;
};

/** Whether the model makes a picture of this size. */
export function makesSize(sizes: Sizes, width: number, height: number): boolean {
  if ('list' in sizes) return sizes.list.includes(`${width}x${height}`);
  const ratio = width / height;
  return (
    width % sizes.multipleOf === 0 &&
    height % sizes.multipleOf === 0 &&
    ratio >= sizes.minRatio &&
    ratio <= sizes.maxRatio &&
    width <= sizes.maxWidth &&
    height <= sizes.maxHeight &&
    width * height >= (sizes.minPixels ?? 0) &&
    width * height <= (sizes.maxPixels ?? Infinity)
  );
}

/** The sizes in words, for a 422: the list, or the rule. */
export function describeSizes(sizes: Sizes): string {
  if ('list' in sizes) return sizes.list.join(', ');
  return (
    `width and height multiples of ${sizes.multipleOf}, at most ${sizes.maxWidth}x${sizes.maxHeight}, ` +
    `the ratio between ${sizes.minRatio.toFixed(2)} and ${sizes.maxRatio.toFixed(2)}` +
    (sizes.minPixels ? `, at least ${sizes.minPixels} pixels` : '') +
    (sizes.maxPixels ? `, at most ${sizes.maxPixels} pixels` : '')
  );
}

/** The size of a `WxH` text; undefined when it is not one. */
export const sizeOf = (size: string) => parse(size);

/**
 * A size the model makes, as close as it can to the shape asked (a video
 * frame that a picture is cropped to), about `pixels` large: for a rule, the
 * shape rounded to its grid and ratio bounds; for a list, the entry nearest
 * in shape. Without sizes (a local renderer), the shape at that size.
 */
export function closestSize(sizes: Sizes | undefined, width: number, height: number, pixels = 1024 * 1024) {
  const ratio = width / height;
  if (sizes && 'list' in sizes) {
    const made = sizes.list.flatMap((size) => parse(size) ?? []);
    const distance = (size: { width: number; height: number }) => Math.abs(Math.log(size.width / size.height / ratio));
    return made.reduce((best, size) => (distance(size) < distance(best) ? size : best));
  }
  const grid = sizes?.multipleOf ?? 16;
  const bounded = sizes ? Math.min(sizes.maxRatio, Math.max(sizes.minRatio, ratio)) : ratio;
  const snap = (side: number) => Math.max(grid, Math.round(side / grid) * grid);
  const fitted = { width: snap(Math.sqrt(pixels * bounded)), height: snap(Math.sqrt(pixels / bounded)) };
  if (!sizes) return fitted;
  const scale = Math.min(1, sizes.maxWidth / fitted.width, sizes.maxHeight / fitted.height);
  return { width: snap(fitted.width * scale), height: snap(fitted.height * scale) };
}
