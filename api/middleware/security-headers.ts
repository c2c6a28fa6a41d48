// Security headers. API answers are data, never a page: a fixed handful says
// so (nothing may run, frame or sniff them), set at once from a precomputed
// list. The documentation page under /docs gets helmet's full set instead,
// since it is HTML that loads scripts and styles of its own.
import type { RequestHandler } from 'express';
import type { Step } from '../bare.ts';
import helmet from 'helmet';

const apiHeaders: [string, string][] = [
  ['X-Content-Type-Options', 'nosniff'],
  ['Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'"],
  ['X-Frame-Options', 'DENY'],
  ['Referrer-Policy', 'no-referrer'],
  ['Strict-Transport-Security', 'max-age=31536000; includeSubDomains'],
];

export function securityHeaders(): Step {
  return (_req, res, next) => {
    for (const [name, value] of apiHeaders) res.setHeader(name, value);
    next();
  };
}

/** helmet's defaults for the documentation page, which loads only its own scripts from this origin. */
export function pageSecurityHeaders(): RequestHandler {
  return helmet({
    contentSecurityPolicy: {
      directives: {
        'img-src': ["'self'", 'data:'],
        'connect-src': ["'self'"],
        // Plain-http deployments (localhost, an internal address) would have
        // every /docs asset rewritten to https and fail to load.
        'upgrade-insecure-requests': null,
      },
    },
  });
}
