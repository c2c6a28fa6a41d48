// How a route module claims a manifest endpoint: who may call it, the zod
// schemas of its input and output (the same schemas validate requests and
// feed the OpenAPI document) and a handler that parses, calls the domain and
// answers.
import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { Actor, UserActor } from '../core/actor.ts';
import type { Authenticated } from '../core/identity/authenticate.ts';
import type { Claims } from '../core/identity/tokens.ts';
import type { Logger } from '../core/logger.ts';
import type { Deps, Services } from '../core/services.ts';
import type { SiteAccess, SiteNeed } from '../core/tenancy/site-access.ts';
import type { ViewKind } from '../core/statistics/recorder.ts';
import type { Site } from '../core/tenancy/sites.ts';
import type { JobWebhook } from '../core/webhooks/request.ts';
import type { RequestDb } from '../db/cancellable.ts';
import type { HttpMethod } from './manifest.ts';
import { somethingToChange } from './schemas.ts';

/**
 * Who may call a route, checked before its handler runs:
 * - `public`: anyone, without a token;
 * - `public-site`: anyone, without a token, on a public site of a tenant in
 *   good standing (`{site_identifier}`; any other is a 404);
 * - `signed-in`: any valid access token, a user's or a service account's;
 * - `user`: a signed-in user (service accounts get 403);
 * - `global-admin`: global administrators;
 * - `{ site, scope? }`: a caller who reaches the `{site_identifier}` of the
 *   path in that role, service accounts with those scopes (see SiteNeed);
 * - `own-credentials`: the handler reads the Authorization header itself (a
 *   refresh token, a metrics token), through `authenticate()` where it needs to.
 */
export type Access = 'public' | 'public-site' | 'signed-in' | 'user' | 'global-admin' | 'own-credentials' | SiteNeed;

/** What every handler gets. */
type BaseContext = {
  /** The process's services, without its pool: handlers reach the database only through `db`. */
  services: Omit<Services, 'db' | 'canceller'>;
  requestId: string;
  log: Logger;
  /** Aborted when the endpoint's timeout passes or the client leaves; long waits must listen to it. */
  signal: AbortSignal;
  /** Epoch milliseconds at which the endpoint's timeout passes. */
  deadline: number;
  /** The database, bound to the request: past the deadline its statement is cancelled and no other starts. */
  db: RequestDb;
  /** That database with the configuration, storage and the request's log, for domain operations that need them. */
  deps: Deps;
  /** The client's address (behind TRUST_PROXY, from X-Forwarded-For). */
  ip: string | undefined;
  /** Where clients reach this API: PUBLIC_URL, else the scheme and host the request came to (for URLs in answers). */
  baseUrl: string;
  /** The caller behind the Authorization header (401 otherwise), for routes that read it themselves. */
  authenticate(): Promise<Authenticated>;
  /** Counts a job submit against the tenant's limit (the answer's RateLimit headers say so); 429 past it. */
  limitJobs(tenantId: string): void;
  /** The webhook a job-creating request named (./jobs/webhook-fields.ts), for the job it submits. */
  webhook?: JobWebhook | null;
  /** The job's own priority a job-creating request asked for (./jobs/webhook-fields.ts), for the job it submits. */
  priority?: number | undefined;
};

/** What a handler gets beyond the base, by what its route declares. */
export type ContextFor<A extends Access> = BaseContext &
  (A extends 'public' | 'own-credentials'
    ? unknown
    : A extends 'public-site'
      ? { site: Site }
      : A extends 'user' | 'global-admin'
        ? { actor: UserActor; claims: Claims }
        : A extends 'signed-in'
          ? { actor: Actor; claims: Claims }
          : { actor: Actor; claims: Claims; site: Site; access: SiteAccess });

export type RouteContext = ContextFor<Access>;

export type Reply = {
  status?: number;
  body?: unknown;
  /** The body already serialised as JSON (a cached answer: encoded once, as bytes), sent as is instead of `body`. */
  json?: string | Buffer;
  headers?: Record<string, string>;
};

type AnyObject = z.ZodObject<z.ZodRawShape>;

/** A response header the route sets, for the OpenAPI document (its schema as JSON Schema; a string when absent). */
export type HeaderSpec = { description: string; schema?: Record<string, unknown>; required?: boolean };

export type ResponseSpec = {
  description: string;
  schema?: z.ZodType;
  /** Default application/json; a binary answer names its type, or several. */
  contentType?: string | string[];
  headers?: Record<string, HeaderSpec>;
};

export type RouteInput<P extends AnyObject, Q extends AnyObject, B extends z.ZodType> = {
  params: z.output<P>;
  query: z.output<Q>;
  body: z.output<B>;
};

export type RouteDefinition<
  A extends Access = Access,
  P extends AnyObject = AnyObject,
  Q extends AnyObject = AnyObject,
  B extends z.ZodType = z.ZodType,
> = {
  /** The manifest key, `METHOD /path` exactly as in api/manifest.tsv. */
  key: `${HttpMethod} /${string}`;
  /** Who may call it; see Access. */
  access: A;
  description?: string;
  request?: {
    params?: P;
    query?: Q;
    body?: B;
    /** Media types accepted for the body (default: JSON only). */
    bodyTypes?: ('application/json' | 'application/x-www-form-urlencoded')[];
    /** A body the handler reads itself (a multipart upload, a signed webhook), for the OpenAPI document. */
    rawBody?: { contentType: string; schema: z.ZodType; required?: boolean }[];
    /** Request headers the route reads, for the OpenAPI document. */
    headers?: AnyObject;
  };
  /**
   * A signed webhook (`signature-failures`) counts only the requests whose
   * signature fails against the sender's IP, not every request, and the route
   * reports those (services.rateLimits.signatures).
   */
  rateLimit?: 'signature-failures';
  /**
   * A public read of one item (`public-site` routes): each answer that is not
   * an error counts a view of the item named by this path parameter, for the
   * site's statistics.
   */
  views?: { kind: ViewKind; param: string };
  /**
   * Answers kept in the public cache (./public-content/answers.ts): the
   * dispatcher serves a kept answer before reading a body, parsing the input
   * or starting the timeout, none of which a kept answer needs.
   */
  publicCache?: true;
  /**
   * `replica`: the handler's statements may be served by the read replica
   * (DATABASE_READ_URL) while it is close enough behind the primary and holds
   * the caller's own last write, else by the primary (db/replica.ts). For GET
   * routes whose handlers only read; authentication and access are read from
   * the primary all the same.
   */
  reads?: 'replica';
  /** Honour an Idempotency-Key header: replay the first answer to a repeated request. */
  idempotent?: boolean;
  /** Success responses by status, and errors particular to the route; the common errors are added from the manifest. */
  responses: Record<number, ResponseSpec>;
  handler: (
    input: RouteInput<P, Q, B>,
    context: ContextFor<A>,
    http: { req: Request; res: Response },
  ) => Promise<Reply>;
};

export function defineRoute<const A extends Access, P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(
  definition: RouteDefinition<A, P, Q, B>,
): RouteDefinition {
  const { request } = definition;
  // A change must change something, and the document says so: one rule for every PATCH.
  if (definition.key.startsWith('PATCH ') && request?.body)
    return {
      ...definition,
      request: { ...request, body: somethingToChange(request.body) },
    } as unknown as RouteDefinition;
  return definition;
}
