// One request to a built route, in order: who is asking (401), what they
// asked (415, 422), whether they may (the route's declared access: 404 for a
// site that is not theirs to see, 403 below the role or scopes it needs),
// then the handler, replayed for a repeated Idempotency-Key. A change is
// answered only once this process has heard what it did to access (a logout
// takes effect for the caller's very next request).
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Request, RequestHandler, Response } from 'express';
import { actorId, type Actor } from '../core/actor.ts';
import { Problem, problemType } from '../core/errors.ts';
import { previewSite } from '../core/content/preview-tokens.ts';
import { idempotencyKey, idempotent, requestHash, type StoredReply } from '../core/idempotency.ts';
import { requireGlobalAdmin, requireUser } from '../core/identity/access.ts';
import type { Logger } from '../core/logger.ts';
import type { Deps, Services } from '../core/services.ts';
import { notPublic, requireSiteNeed, type SiteAccess } from '../core/tenancy/site-access.ts';
import type { Site } from '../core/tenancy/sites.ts';
import { cancellableDb, type RequestDb } from '../db/cancellable.ts';
import { allTenants } from '../db/tenant-scope.ts';
import { networkOf } from '../core/net/client-network.ts';
import type { BareRequest } from './bare.ts';
import { parseInput, siteIdentifier } from './input.ts';
import { requestLog } from './middleware/logging.ts';
import { announce, overLimit } from './middleware/rate-limit.ts';
import type { Endpoint } from './manifest.ts';
import type { Deadline } from './middleware/timeout.ts';
import type { Access, RouteContext, RouteDefinition } from './route.ts';

const withToken = (access: Access) =>
  typeof access === 'object' || access === 'signed-in' || access === 'user' || access === 'global-admin';

const bySite = (access: Access) => typeof access === 'object' || access === 'public-site';

/**
 * A body that could not be read (malformed JSON, too large), kept by the
 * dispatcher for the route to answer once it knows who is asking and that
 * they may: a 400 or 413 is about what they asked.
 */
export const unreadBody = new WeakMap<IncomingMessage, unknown>();

export function handle(endpoint: Endpoint, route: RouteDefinition, services: Services): RequestHandler {
  const { access } = route;
  // Handlers get everything but the pool: their statements go through the request's database.
  const { db: pool, canceller, ...handlerServices } = services;
  const primary = { pool, canceller };
  const replica = route.reads === 'replica' ? services.replica : undefined;
  const changes = endpoint.method !== 'GET';
  return async (req, res) => {
    const { signal, deadline } = res.locals.deadline as Deadline;
    // Who the caller is and what they may reach is read from the primary, whatever the route reads,
    // and across tenants: the site and the caller's memberships are what tell the request's tenant.
    const db = cancellableDb(primary, signal, { tenant: allTenants });
    const authenticate = () => services.accessCache.authenticate(db, req.get('authorization'));
    // Who is asking comes before what they asked: a bad token is a 401 even with a bad body.
    const auth = withToken(access) ? await authenticate() : undefined;
    // Whether they may comes before what they asked too: a caller the route refuses is told so (403, or 404
    // for a site not theirs to see) whatever the body, and learns nothing of what the route would accept.
    const site = bySite(access) ? { site_identifier: siteIdentifier(req) } : undefined;
    const preview = previewToken(route, req);
    const admitted = preview
      ? { site: await previewSite(db, preview, site!.site_identifier) }
      : await admit(services.accessCache, db, access, auth?.actor, site);
    if (preview) previewing.add(req);
    if (unreadBody.has(req)) throw unreadBody.get(req);
    const input = parseInput(route, req);
    // A public read that carries a token this process knows reads its holder's own writes too; a preview
    // reads the primary, where its temporary views can be made (core/content/preview.ts).
    const reads = preview
      ? undefined
      : replica?.routing(auth ? actorId(auth.actor) : services.accessCache.knownCaller(req.get('authorization')));
    const handlerDb = cancellableDb(primary, signal, { reads, tenant: tenantOf(admitted.site, auth?.actor) });
    const context = new Context(handlerServices, req, res, handlerDb, signal, deadline, authenticate) as Context &
      RouteContext & { actor?: Actor; site?: unknown; access?: unknown };
    if (auth) Object.assign(context, auth);
    if (admitted.site) {
      context.site = admitted.site;
      res.locals.siteId = admitted.site.id;
    }
    if (admitted.access) context.access = admitted.access;
    const answer = async (): Promise<StoredReply & { json?: string | Buffer }> => {
      const reply = await (route.rateLimit === 'signature-failures'
        ? countingSignatureFailures(services, req, route.handler(input, context as never, { req, res }))
        : route.handler(input, context, { req, res }));
      return {
        status: reply.status ?? (reply.body === undefined && reply.json === undefined ? 204 : 200),
        body: reply.body,
        ...(reply.json === undefined ? {} : { json: reply.json }),
        headers: reply.headers ?? {},
      };
    };
    const key = route.idempotent ? req.get('idempotency-key') : undefined;
    let reply: StoredReply & { json?: string | Buffer; replayed: boolean };
    try {
      reply =
        key === undefined
          ? { ...(await answer()), replayed: false }
          : await replayable(services, endpoint, context.actor, key, input, answer);
    } finally {
      // Once whatever the request committed is committed (or it failed): the caller reads it back from the primary.
      if (changes && auth) services.replica?.wrote(actorId(auth.actor));
    }
    if (changes) await services.accessCache.settled();
    if (route.views && context.site) countView(services, route.views, (context.site as { id: string }).id, req);
    if (res.headersSent) return;
    const headers = { ...reply.headers, ...(reply.replayed ? { 'Idempotent-Replayed': 'true' } : {}) };
    writeReply(req, res, { ...reply, headers });
  };
}

/**
 * Public reads asked with a preview token (core/content/preview-tokens.ts),
 * admitted by the token to its site rather than by the site being public: the
 * public answers (./public-content/answers.ts) then read drafts, uncached.
 */
export const previewing = new WeakSet<IncomingMessage>();

/** The Preview-Token of a request to a route that reads one (it declares the header), else undefined. */
function previewToken(route: RouteDefinition, req: Request): string | undefined {
  if (route.access !== 'public-site' || !route.request?.headers?.shape['preview-token']) return undefined;
  return req.get('preview-token');
}

/**
 * What a route's declared access asks beyond a valid token (checked before):
 * a user, a global administrator, or the `{site_identifier}` of its input —
 * public, or reached by the caller in the role and scopes declared. Answers
 * the site and the caller's access to it where the route names one. The MCP
 * tools (./mcp/) admit their calls the same way as the routes they mirror.
 */
export async function admit(
  accessCache: Services['accessCache'],
  db: RequestDb,
  access: Access,
  actor: Actor | undefined,
  params: unknown,
): Promise<{ site?: Site; access?: SiteAccess }> {
  // An API key is for an app's work on sites; what needs a person (their account, tenant administration) needs their token.
  if ((access === 'user' || access === 'global-admin') && actor?.apiKey) {
    throw new Problem(403, 'An API key may not do this; it needs a signed-in user’s token.');
  }
  if (access === 'user') requireUser(actor!);
  else if (access === 'global-admin') requireGlobalAdmin(actor!);
  else if (access === 'public-site') {
    const site = await accessCache.publicSite(db, (params as { site_identifier: string }).site_identifier);
    if (!site) throw notPublic();
    return { site };
  } else if (typeof access === 'object') {
    const identifier = (params as { site_identifier: string }).site_identifier;
    const found = requireSiteNeed(await accessCache.site(db, actor!, identifier), access);
    return { site: found.site, access: found };
  }
  return {};
}

/**
 * The tenant a request's handler acts for in the database (db/tenant-scope.ts):
 * the tenant of the site it was admitted to, else a service account's own.
 * Global administrators are bound to no tenant (some site routes show them
 * every site's figures), and other routes — a user's own account across the
 * tenants they belong to, sign-in, signed webhooks — cross tenants by nature:
 * they act for all of them (unless their caller acts for one: an MCP tool call).
 */
export function tenantOf(site: Site | undefined, actor: Actor | undefined): string | undefined {
  if (actor?.apiKey) return actor.apiKey.tenantId;
  if (actor?.kind === 'service') return actor.tenantId;
  if (actor?.isGlobalAdmin) return undefined;
  return site?.tenant_id;
}

/** A public read of the item the route names (RouteDefinition.views), by its path parameter as asked. */
export function countView(
  services: Pick<Services, 'statistics'>,
  views: NonNullable<RouteDefinition['views']>,
  siteId: string,
  req: BareRequest,
): void {
  // find-my-way gives one string per parameter (Express types allow arrays).
  services.statistics.view(siteId, views.kind, req.params[views.param] as string);
}

/** Writes a route's reply: its status and headers, and its body as JSON (already serialised when `json` is given). */
export function writeReply(
  req: IncomingMessage,
  res: ServerResponse,
  reply: { status: number; body?: unknown; json?: string | Buffer; headers: Record<string, string> },
): void {
  if (reply.json !== undefined) sendJson(req, res, reply.status, reply.json, reply.headers);
  else send(req, res, reply.status, reply.body, reply.headers);
}

/**
 * What a handler is given. Made for every request, so what only some
 * handlers read (the log bound to the request, the client's address) is
 * worked out when read.
 */
class Context {
  readonly services: RouteContext['services'];
  readonly db: RequestDb;
  readonly signal: AbortSignal;
  readonly deadline: number;
  readonly authenticate: RouteContext['authenticate'];
  readonly #req: Request;
  readonly #res: Response;
  #deps: Deps | undefined;

  constructor(
    services: RouteContext['services'],
    req: Request,
    res: Response,
    db: RequestDb,
    signal: AbortSignal,
    deadline: number,
    authenticate: RouteContext['authenticate'],
  ) {
    this.services = services;
    this.#req = req;
    this.#res = res;
    this.db = db;
    this.signal = signal;
    this.deadline = deadline;
    this.authenticate = authenticate;
  }

  get requestId(): string {
    return this.#req.id;
  }

  get log(): Logger {
    return requestLog(this.#req);
  }

  get ip(): string | undefined {
    return this.#req.ip;
  }

  get baseUrl(): string {
    return this.services.config.publicUrl ?? `${this.#req.protocol}://${this.#req.get('host')}`;
  }

  limitJobs(tenantId: string): void {
    const verdict = this.services.rateLimits.request('per-tenant-jobs', tenantId);
    announce(this.#res, verdict);
    if (!verdict.allowed) throw overLimit(verdict, 'jobs submitted for this tenant');
  }

  get deps(): Deps {
    return (this.#deps ??= {
      db: this.db,
      config: this.services.config,
      storage: this.services.storage,
      logger: requestLog(this.#req),
    });
  }
}

/**
 * A signed webhook whose signature fails counts against the sender's
 * address, and past the limit it is a 429 rather than another signature
 * check's answer. Only failures count: a valid delivery is never refused.
 */
async function countingSignatureFailures<T>(services: Services, req: Request, work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (error) {
    if (error instanceof Problem && error.type === problemType('invalid-signature')) {
      const verdict = services.rateLimits.signatures.failedSignature(networkOf(req.ip).network);
      if (!verdict.allowed) throw overLimit(verdict, 'requests with a bad signature from this address');
    }
    throw error;
  }
}

/**
 * Idempotency keys are kept with the process's pool, not the request's: a
 * first attempt cut off by its deadline must still let go of its key, or
 * every retry would be told it is still running.
 */
function replayable(
  services: Services,
  endpoint: Endpoint,
  actor: Actor | undefined,
  key: string,
  input: unknown,
  answer: () => Promise<StoredReply>,
) {
  const valid = idempotencyKey.safeParse(key);
  if (!valid.success)
    throw new Problem(422, valid.error.issues[0]?.message, {
      errors: [{ path: 'headers.idempotency-key', message: 'invalid' }],
    });
  const scope = { actorId: actor ? actorId(actor) : 'anonymous', route: endpoint.key, key, hash: requestHash(input) };
  return idempotent(services.db, scope, answer);
}

/** The answer, as JSON: written directly, since Express's send() would work out again what is known here. */
function send(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string>,
): void {
  if (body === undefined) {
    for (const name in headers) res.setHeader(name, headers[name]!);
    res.statusCode = status;
    res.end();
    return;
  }
  sendJson(req, res, status, JSON.stringify(body), headers);
}

function sendJson(
  req: IncomingMessage,
  res: ServerResponse,
  status: number,
  json: string | Buffer,
  headers: Record<string, string>,
): void {
  for (const name in headers) res.setHeader(name, headers[name]!);
  res.statusCode = status;
  res.setHeader('Content-Type', 'application/json; charset=utf-8');
  res.setHeader('Content-Length', typeof json === 'string' ? Buffer.byteLength(json) : json.length);
  res.end(req.method === 'HEAD' ? undefined : json);
}
