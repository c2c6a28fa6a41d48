// This API process's caches, for global admins: the public answers and the
// access maps (sessions, accounts, sites...), each with its size, hits,
// misses and the entries its size bound pushed out; and dropping what has
// expired now rather than when next asked for. Figures are per process (each
// API process keeps its own); a Redis-backed public cache reports what this
// process asked of it.
import { z } from 'zod';
import type { PublicCache } from '../content/public-cache.ts';
import type { AccessCache } from '../access-cache.ts';

const figures = z.object({
  name: z.string(),
  store: z.enum(['memory', 'redis']),
  entries: z.number().int().describe('Held now (a Redis store: not counted here)'),
  hits: z.number().int(),
  misses: z.number().int(),
  hit_ratio: z.number().nullable(),
  evictions: z.number().int().describe('Pushed out by the size bound since the process started'),
  invalidations: z.number().int().nullable().describe('Changes heard that dropped entries (public answers)'),
});

export const cacheStatisticsSchema = z
  .object({ process: z.number().int(), caches: z.array(figures) })
  .meta({ id: 'CacheStatistics' });

export const cacheCleanupSchema = z
  .object({
    process: z.number().int(),
    removed: z.array(z.object({ name: z.string(), removed: z.number().int() })),
    total: z.number().int(),
  })
  .meta({ id: 'CacheCleanup' });

const ratio = (hits: number, misses: number) =>
  hits + misses === 0 ? null : Math.round((hits / (hits + misses)) * 10_000) / 10_000;

export function cacheStatistics(publicCache: PublicCache, accessCache: AccessCache) {
  const answers = publicCache.counts();
  return {
    process: process.pid,
    caches: [
      { name: 'public', ...answers, hit_ratio: ratio(answers.hits, answers.misses) },
      ...accessCache.counts().map((map) => ({ ...map, hit_ratio: ratio(map.hits, map.misses), invalidations: null })),
    ],
  };
}

export function cleanupCaches(publicCache: PublicCache, accessCache: AccessCache) {
  const removed = [{ name: 'public', removed: publicCache.prune() }, ...accessCache.prune()];
  return { process: process.pid, removed, total: removed.reduce((sum, row) => sum + row.removed, 0) };
}
