// CORS for the origins config.corsOrigins names: CORS_ORIGINS, or outside
// production when it is unset, any port of localhost (core/config.ts), so a
// front end in development reads the API with nothing to set. "*" allows any
// origin; "http://host:*" any port of that host. Bearer tokens travel in a
// header, not a cookie, so credentials are not enabled, except on the OAuth
// sign-in routes: their cookie binds a sign-in to the browser that started it
// (api/auth/oauth.ts), and a front end on a named origin must be able to send
// it back. Never to "*", which browsers refuse credentials anyway.
//
// A preflight is answered here, 204, before the dispatcher looks for an
// endpoint (which would answer OPTIONS with a 405): for every path, since the
// browser asks before it knows whether the path exists. A plain OPTIONS (no
// Access-Control-Request-Method) is not a preflight and goes on to that 405.
import cors from 'cors';
import type { BareRequest, Step } from '../bare.ts';

const oauthSignIn = /^\/auth\/signup\/oauth\//;

/**
 * The response headers a browser script may read beyond the safelisted ones:
 * each one the API sets that a client acts on.
 */
export const exposedHeaders = [
  'Location',
  'Retry-After',
  'RateLimit',
  'RateLimit-Policy',
  'X-Request-Id',
  'ETag',
  'Preference-Applied',
  'Idempotent-Replayed',
  'WWW-Authenticate',
  'Content-Range',
  'Accept-Ranges',
];

/** An origin as written in CORS_ORIGINS, as the cors package matches it: a port of `*` is any port, or none. */
export function originMatcher(origin: string): string | RegExp {
  if (!origin.endsWith(':*')) return origin;
  const escaped = origin.slice(0, -2).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return new RegExp(`^${escaped}(:\\d+)?$`, 'i');
}

export function corsPolicy(origins: string[]): Step | undefined {
  if (origins.length === 0) return undefined;
  const any = origins.includes('*');
  const options = {
    origin: any ? '*' : origins.map(originMatcher),
    exposedHeaders,
    maxAge: 600,
  };
  const withCookie = { ...options, credentials: !any };
  const policy = cors<BareRequest>((req, callback) =>
    callback(null, oauthSignIn.test(req.url ?? '') ? withCookie : options),
  );
  return (req, res, next) => {
    if (req.method === 'OPTIONS' && req.headers['access-control-request-method'] === undefined) return next();
    return policy(req, res, next);
  };
}
