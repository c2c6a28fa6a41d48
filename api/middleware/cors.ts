// CORS only when CORS_ORIGINS lists origins ("*" allows any). Bearer tokens
// travel in a header, not a cookie, so credentials are never enabled.
import cors from 'cors';
import type { Step } from '../bare.ts';

export function corsPolicy(origins: string[]): Step | undefined {
  if (origins.length === 0) return undefined;
  return cors({
    origin: origins.includes('*') ? '*' : origins,
    exposedHeaders: ['Location', 'Retry-After', 'X-Request-Id'],
    maxAge: 600,
  });
}
