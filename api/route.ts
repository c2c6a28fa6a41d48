// How a route module claims a manifest endpoint: the zod schemas of its input
// and output (the same schemas validate requests and feed the OpenAPI
// document) and a handler that parses, calls the domain and answers.
import type { Request, Response } from 'express';
import type { z } from 'zod';
import type { Actor } from '../core/actor.ts';
import type { Claims } from '../core/identity/tokens.ts';
import type { Logger } from '../core/logger.ts';
import type { Services } from '../core/services.ts';
import type { RequestDb } from '../db/cancellable.ts';
import type { HttpMethod } from './manifest.ts';

export type RouteContext = {
  services: Services;
  requestId: string;
  log: Logger;
  /** Aborted when the endpoint's timeout passes; long waits must listen to it. */
  signal: AbortSignal;
  /** Epoch milliseconds at which the endpoint's timeout passes. */
  deadline: number;
  /** Database access whose statements are cancelled at the deadline. */
  db: RequestDb;
  /** The authenticated caller; reading it on a public endpoint is a 401. */
  actor: Actor;
  /** The verified access-token claims, on bearer endpoints. */
  claims: Claims | undefined;
  /** The client's address (behind TRUST_PROXY, from X-Forwarded-For). */
  ip: string | undefined;
};

export type Reply = {
  status?: number;
  body?: unknown;
  headers?: Record<string, string>;
};

type AnyObject = z.ZodObject<z.ZodRawShape>;

export type ResponseSpec = { description: string; schema?: z.ZodType; contentType?: string };

export type RouteInput<P extends AnyObject, Q extends AnyObject, B extends z.ZodType> = {
  params: z.output<P>;
  query: z.output<Q>;
  body: z.output<B>;
};

export type RouteDefinition<
  P extends AnyObject = AnyObject,
  Q extends AnyObject = AnyObject,
  B extends z.ZodType = z.ZodType,
> = {
  /** The manifest key, `METHOD /path` exactly as in api/manifest.tsv. */
  key: `${HttpMethod} /${string}`;
  description?: string;
  request?: {
    params?: P;
    query?: Q;
    body?: B;
    /** Media types accepted for the body (default: JSON only). */
    bodyTypes?: ('application/json' | 'application/x-www-form-urlencoded')[];
  };
  /**
   * `access` (default): bearer endpoints require a valid access token before
   * anything else runs. `custom`: the handler reads the Authorization header
   * itself (the refresh-token endpoint takes a refresh token as its bearer).
   */
  auth?: 'access' | 'custom';
  /** Honour an Idempotency-Key header: replay the first answer to a repeated request. */
  idempotent?: boolean;
  /** Success responses by status; error responses are added from the manifest. */
  responses: Record<number, ResponseSpec>;
  handler: (input: RouteInput<P, Q, B>, context: RouteContext, http: { req: Request; res: Response }) => Promise<Reply>;
};

export function defineRoute<P extends AnyObject, Q extends AnyObject, B extends z.ZodType>(
  definition: RouteDefinition<P, Q, B>,
): RouteDefinition {
  return definition as unknown as RouteDefinition;
}
