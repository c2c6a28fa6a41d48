// Every answer says which limits it counted against (the IETF RateLimit-Policy
// and RateLimit header fields, draft-ietf-httpapi-ratelimit-headers) and one
// over a limit is a 429 with Retry-After. A request with a valid access token
// counts against that token, any other (no token, or one that does not
// verify: forged, expired, malformed) against its IP (an IPv6 client by its
// /64). Checking a token's signature is CPU only, so a limited caller is still
// turned away before anything is read or parsed, and a token this process has
// verified before is not checked again. So a made-up token never buys an
// allowance of its own, nor a row in the store.
import type { IncomingMessage, ServerResponse } from 'node:http';
import proxyaddr from 'proxy-addr';
import type { Config } from '../../core/config.ts';
import { Problem } from '../../core/errors.ts';
import { networkOf } from '../../core/net/client-network.ts';
import { accessClaims } from '../../core/identity/authenticate.ts';
import type { Verdict } from '../../core/identity/rate-limit.ts';
import type { Services } from '../../core/services.ts';

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

/** Whether the proxy at `address`, `hop` steps from the API (0: the connection's peer), may name the client. */
export type ProxyTrust = (address: string, hop: number) => boolean;

/**
 * TRUST_PROXY as one function, for Express's `trust proxy` setting (req.ip)
 * and clientAddress() alike, so both name the same client: a number of hops
 * trusts that many proxies counted from the API; a list trusts the proxies
 * at those addresses. Undefined when no proxy is trusted.
 */
export function proxyTrust(setting: Config['trustProxy']): ProxyTrust | undefined {
  if (setting === false) return undefined;
  if (typeof setting === 'number') return (_address, hop) => hop < setting;
  return proxyaddr.compile(setting);
}

/**
 * The client's address, as Express's `req.ip` gives it, for requests Express
 * has not seen: behind trusted proxies the first address of X-Forwarded-For,
 * counted from the right, that is not a trusted proxy (the entries left of it
 * are the client's own writing), else the socket's, read directly rather than
 * parsing a header only to ignore it.
 */
export function clientAddress(trust: ProxyTrust | undefined): (req: IncomingMessage) => string | undefined {
  return trust ? (req) => proxyaddr(req, trust) : (req) => req.socket.remoteAddress;
}

/**
 * The per-token key of a request's bearer token when it is a valid access
 * token: its signature's first 22 base64url characters (132 bits, as unique
 * as the token, and a short key to store). Anything else has none.
 * Verifying costs tens of µs (jsonwebtoken), so the tokens verified are
 * remembered by that key until they expire: a lookup by 22 characters rather
 * than by the whole header, which is then compared, so a made-up token that
 * borrows a real signature is not taken for the real one. Forgotten
 * wholesale past a bound.
 */
function tokenKeys(config: Config): (authorization: string | undefined) => string | undefined {
  const verified = new Map<string, { authorization: string; expiresAt: number }>();
  return (authorization) => {
    if (!authorization || authorization.length < 8 || authorization.slice(0, 7).toLowerCase() !== 'bearer ') return;
    const signature = authorization.lastIndexOf('.') + 1;
    const key = authorization.slice(signature, signature + 22);
    const known = verified.get(key);
    if (known?.authorization === authorization && known.expiresAt > Date.now()) return key;
    let expiresAt: number;
    try {
      expiresAt = accessClaims(config, authorization).exp * 1000;
    } catch {
      return undefined;
    }
    if (verified.size >= 10_000) verified.clear();
    verified.set(key, { authorization, expiresAt });
    return key;
  };
}

/**
 * The step that counts each request against its token or IP, built once per
 * app (it remembers the tokens it verified). Signed webhooks count only
 * their failed signatures (`signedWebhook`), and only once verified (the
 * route refuses a bad one past the limit, ../handle.ts): here they are told
 * where they stand, never turned away, so a valid delivery always gets
 * through whatever was forged from its address. Returns the problem to
 * answer when the request is over its limit.
 */
export function requestLimit(
  services: Services,
  address: (req: IncomingMessage) => string | undefined,
): (req: IncomingMessage, res: ServerResponse, signedWebhook: boolean) => Problem | undefined {
  const limits = services.rateLimits;
  const tokenKey = tokenKeys(services.config);
  return (req, res, signedWebhook) => {
    if (signedWebhook) {
      announceFirst(res, limits.signatures.standing(networkOfClient(address(req))));
      return undefined;
    }
    const token = tokenKey(req.headers.authorization);
    const verdict = token
      ? limits.request('per-token', token)
      : limits.request('per-ip', networkOfClient(address(req)));
    announceFirst(res, verdict);
    return verdict.allowed
      ? undefined
      : overLimit(verdict, token ? 'requests with this token' : 'requests from this address');
  };
}
