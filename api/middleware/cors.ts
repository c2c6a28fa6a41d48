// CORS only when CORS_ORIGINS lists origins ("*" allows any). Bearer tokens
// travel in a header, not a cookie, so credentials are not enabled, except on
// the OAuth sign-in routes: their cookie binds a sign-in to the browser that
// started it (api/auth/oauth.ts), and a front end on a named origin must be
// able to send it back. Never to "*", which browsers refuse credentials anyway.
import cors from 'cors';
import type { Step } from '../bare.ts';

const oauthSignIn = /^\/auth\/signup\/oauth\//;

export function corsPolicy(origins: string[]): Step | undefined {
  if (origins.length === 0) return undefined;
  const any = origins.includes('*');
  const options = {
    origin: any ? '*' : origins,
    exposedHeaders: ['Location', 'Retry-After', 'X-Request-Id'],
    maxAge: 600,
  };
  const withCookie = { ...options, credentials: !any };
  return cors((req, callback) => callback(null, oauthSignIn.test(req.url ?? '') ? withCookie : options));
}
