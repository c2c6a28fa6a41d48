// What an agent run's tool call is given in place of the HTTP request an MCP
// call arrives on: the run's actor, the worker's services, and a database —
// the transaction the step is recorded in, so a tool's writes and its step
// commit together (./tool-steps.ts). There is no client to wait for: a tool
// that makes a job answers it at once, and the model may read it again with
// get_job.
import type { Actor } from '../../core/actor.ts';
import type { Claims } from '../../core/identity/tokens.ts';
import { configuredBase } from '../../core/media/urls.ts';
import type { Services } from '../../core/services.ts';
import type { CommonQueryMethods } from '../../db/pool.ts';
import type { RequestDb } from '../../db/cancellable.ts';
import type { CallContext } from '../../api/mcp/tool.ts';
import { overLimit } from '../../api/middleware/rate-limit.ts';
import type { JobContext } from '../job.ts';

/** The claims a token for the actor would carry: tools do not read them, but the context's type has them. */
function claimsOf(actor: Actor, jobId: string): Claims {
  const now = Math.floor(Date.now() / 1000);
  const base = {
    typ: 'access' as const,
    jti: `agent-run:${jobId}`,
    iat: now,
    exp: now + 3600,
    iss: 'agent-run',
    aud: 'agent-run',
  };
  return actor.kind === 'user'
    ? { ...base, sub: actor.userId, act: 'user' }
    : { ...base, sub: actor.serviceAccountId, act: 'service', tenant_id: actor.tenantId, scopes: actor.scopes };
}

export function toolContext(
  run: Pick<JobContext, 'job' | 'logger' | 'signal'>,
  services: Services,
  actor: Actor,
  db: CommonQueryMethods,
  step: number,
): CallContext {
  // A request's context never holds the pool: its statements go through `db`.
  const { db: _pool, canceller: _canceller, ...shared } = services;
  return {
    services: shared,
    requestId: `agent-run:${run.job.id}:${step}`,
    log: run.logger.child({ step }),
    signal: run.signal,
    // A tool's own statements are bounded by the job's timeout, not a request's.
    deadline: Date.now() + 10 * 60_000,
    // The step's transaction: its statements are not cancelled by a deadline, as a request's would be.
    db: db as RequestDb,
    deps: { db, config: services.config, storage: services.storage, logger: run.logger },
    ip: undefined,
    // No request: the URLs a tool's answer carries point where the API is published, else where it listens.
    baseUrl: configuredBase(services.config),
    authenticate: () => Promise.resolve({ actor, claims: claimsOf(actor, run.job.id) }),
    limitJobs: (tenantId) => {
      const verdict = services.rateLimits.request('per-tenant-jobs', tenantId);
      if (!verdict.allowed) throw overLimit(verdict, 'jobs submitted for this tenant');
    },
    webhook: null,
    actor,
    claims: claimsOf(actor, run.job.id),
  };
}
