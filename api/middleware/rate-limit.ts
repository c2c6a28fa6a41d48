// Every answer says which limits it counted against (the IETF RateLimit-Policy
// and RateLimit header fields, draft-ietf-httpapi-ratelimit-headers) and one
// over a limit is a 429 with Retry-After. A request with a bearer token counts
// against that token, any other against its IP (an IPv6 client by its /64):
// the key is known before the token is verified, so a limited caller is
// turned away before anything is read, verified or parsed. Keying by the
// token's signature means nobody can spend another caller's allowance with a
// forged token; forged tokens then fail verification and count nothing more.
import type { Request, Response } from 'express';
import { Problem } from '../../core/errors.ts';
import { networkOf } from '../../core/fraud/networks.ts';
import type { RateLimits, Verdict } from '../../core/identity/rate-limit.ts';

/** Adds a verdict to the answer's headers (a request may count against several policies: a job submit). */
export function announce(res: Response, verdict: Verdict): void {
  const policy = `"${verdict.policy}";q=${verdict.limit};w=${verdict.windowSeconds}`;
  const state = `"${verdict.policy}";r=${verdict.remaining};t=${verdict.resetSeconds}`;
  const policies = res.getHeader('RateLimit-Policy');
  res.setHeader('RateLimit-Policy', policies ? `${policies as string}, ${policy}` : policy);
  const states = res.getHeader('RateLimit');
  res.setHeader('RateLimit', states ? `${states as string}, ${state}` : state);
}

/** The 429 for a verdict that refused. */
export function overLimit(verdict: Verdict, what: string): Problem {
  return new Problem(429, `Too many ${what}; try again in ${verdict.resetSeconds} s.`, {
    headers: { 'Retry-After': String(verdict.resetSeconds) },
    extensions: { policy: verdict.policy },
  });
}

/** The token's signature (its last part): unique to the token and unforgeable. */
function tokenKey(authorization: string | undefined): string | undefined {
  if (!authorization || authorization.length < 8 || authorization.slice(0, 7).toLowerCase() !== 'bearer ') return;
  const signature = authorization.slice(authorization.lastIndexOf('.') + 1).trim();
  // 22 base64url characters are 132 bits: as unique as the token, and a shorter key to store.
  return signature.length >= 22 ? signature.slice(0, 22) : undefined;
}

/**
 * Counts the request against its token or IP. Signed webhooks count only
 * their failed signatures (`signedWebhook`): a busy payment provider is never
 * turned away for sending many valid events. Returns the problem to answer
 * when the request is over its limit.
 */
export function limitRequest(
  limits: RateLimits,
  req: Request,
  res: Response,
  signedWebhook: boolean,
): Problem | undefined {
  if (signedWebhook) {
    const verdict = limits.signatures.peek(networkOf(req.ip).network);
    announce(res, verdict);
    return verdict.allowed ? undefined : overLimit(verdict, 'requests with a bad signature from this address');
  }
  const token = tokenKey(req.headers.authorization);
  const verdict = token ? limits.request('per-token', token) : limits.request('per-ip', networkOf(req.ip).network);
  announce(res, verdict);
  return verdict.allowed
    ? undefined
    : overLimit(verdict, token ? 'requests with this token' : 'requests from this address');
}
