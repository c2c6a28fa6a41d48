// Every answer says which limits it counted against (the IETF RateLimit-Policy
// and RateLimit header fields, draft-ietf-httpapi-ratelimit-headers) and one
// over a limit is a 429 with Retry-After. A request with a bearer token counts
// against that token, any other against its IP (an IPv6 client by its /64):
// the key is known before the token is verified, so a limited caller is
// turned away before anything is read, verified or parsed. Keying by the
// token's signature means nobody can spend another caller's allowance with a
// forged token; forged tokens then fail verification and count nothing more.
import type { IncomingMessage, ServerResponse } from 'node:http';
import proxyaddr from 'proxy-addr';
import { Problem } from '../../core/errors.ts';
import { networkOf } from '../../core/fraud/networks.ts';
import type { RateLimits, Verdict } from '../../core/identity/rate-limit.ts';

/** The RateLimit field of a verdict: `"<name>";r=<remaining>;t=<seconds>`. */
const stateField = (verdict: Verdict) => `"${verdict.policy}";r=${verdict.remaining};t=${verdict.resetSeconds}`;

/** Adds a verdict to the answer's headers, after the request's first (a job submit counts against two policies). */
export function announce(res: ServerResponse, verdict: Verdict): void {
  res.setHeader('RateLimit-Policy', `${res.getHeader('RateLimit-Policy') as string}, ${verdict.policyField}`);
  res.setHeader('RateLimit', `${res.getHeader('RateLimit') as string}, ${stateField(verdict)}`);
}

/** The request's first verdict (every request has one, from the dispatcher), set before anything can add to it. */
function announceFirst(res: ServerResponse, verdict: Verdict): void {
  res.setHeader('RateLimit-Policy', verdict.policyField);
  res.setHeader('RateLimit', stateField(verdict));
}

/**
 * A client's network, remembered: parsing an address costs more than the
 * rest of the limit. Forgotten wholesale past a bound, so a flood of
 * addresses cannot grow it without end.
 */
const networks = new Map<string, string>();
function networkOfClient(ip: string | undefined): string {
  if (ip === undefined) return networkOf(ip).network;
  let network = networks.get(ip);
  if (network === undefined) {
    if (networks.size >= 10_000) networks.clear();
    networks.set(ip, (network = networkOf(ip).network));
  }
  return network;
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
 * The client's address, as Express's `req.ip` gives it (with `trust proxy`
 * set to TRUST_PROXY), for requests Express has not seen: behind a trusted
 * proxy the furthest address of X-Forwarded-For, else the socket's, read
 * directly rather than parsing a header only to ignore it.
 */
export function clientAddress(trustProxy: boolean): (req: IncomingMessage) => string | undefined {
  const trustAll = () => true;
  return trustProxy ? (req) => proxyaddr(req, trustAll) : (req) => req.socket.remoteAddress;
}

/**
 * Counts the request against its token or IP. Signed webhooks count only
 * their failed signatures (`signedWebhook`): a busy payment provider is never
 * turned away for sending many valid events. Returns the problem to answer
 * when the request is over its limit.
 */
export function limitRequest(
  limits: RateLimits,
  req: IncomingMessage,
  res: ServerResponse,
  signedWebhook: boolean,
  address: (req: IncomingMessage) => string | undefined,
): Problem | undefined {
  if (signedWebhook) {
    const verdict = limits.signatures.peek(networkOfClient(address(req)));
    announceFirst(res, verdict);
    return verdict.allowed ? undefined : overLimit(verdict, 'requests with a bad signature from this address');
  }
  const token = tokenKey(req.headers.authorization);
  const verdict = token ? limits.request('per-token', token) : limits.request('per-ip', networkOfClient(address(req)));
  announceFirst(res, verdict);
  return verdict.allowed
    ? undefined
    : overLimit(verdict, token ? 'requests with this token' : 'requests from this address');
}
