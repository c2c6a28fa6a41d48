// Latency histograms in fixed buckets: counts per bucket add up across
// minutes and processes, and percentiles come from the merged counts (within
// a bucket, interpolated linearly), never from averages.

/** Upper bounds in milliseconds; the last bucket holds everything slower. */
export const bucketBounds = [
  1,
  2,
  3,
  5,
  8,
  13,
  20,
  30,
  50,
  80,
  130,
  200,
  300,
  500,
  800,
  1300,
  2000,
  3000,
  5000,
  8000,
  13_000,
  20_000,
  30_000,
  Number.POSITIVE_INFINITY,
] as const;

export const bucketCount = bucketBounds.length;

export function bucketOf(ms: number): number {
  for (let i = 0; i < bucketCount; i++) if (ms <= bucketBounds[i]!) return i;
  return bucketCount - 1;
}

/** The q-quantile (0–1) of a histogram, in ms; null when it is empty. */
export function percentile(buckets: readonly number[], q: number): number | null {
  const total = buckets.reduce((sum, count) => sum + count, 0);
  if (total === 0) return null;
  const rank = q * total;
  let seen = 0;
  for (let i = 0; i < buckets.length; i++) {
    const count = buckets[i]!;
    if (count > 0 && seen + count >= rank) {
      const lower = i === 0 ? 0 : bucketBounds[i - 1]!;
      const upper = bucketBounds[i]!;
      if (!Number.isFinite(upper)) return lower;
      return Math.round((lower + ((rank - seen) / count) * (upper - lower)) * 100) / 100;
    }
    seen += count;
  }
  return bucketBounds.at(-2)!;
}

/** Adds histograms bucket by bucket. */
export function mergeBuckets(into: number[], from: readonly number[]): number[] {
  for (let i = 0; i < from.length; i++) into[i] = (into[i] ?? 0) + from[i]!;
  return into;
}
