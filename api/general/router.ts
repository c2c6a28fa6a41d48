// General: service information and health probes. Public, cheap, and bounded
// in time whatever state the dependencies are in.
import { databaseRetryAfterSeconds, Problem } from '../../core/errors.ts';
import { checkCache, checkDatabase, checkMigrations, checkWorkers } from '../../core/health.ts';
import { service, uptimeSeconds } from '../../core/version.ts';
import type { ReplicaState } from '../../db/replica.ts';
import { noStore, problemResponse, retryAfterHeader } from '../responses.ts';
import { defineRoute } from '../route.ts';
import * as schemas from './schemas.ts';

export type Catalog = { total: number; implemented: number; beyond_spec: number };

/** The replica as the watch last saw it (db/replay-watch.ts): up while it may be read. */
function replicaCheck(state: ReplicaState) {
  const usable = state.reachable && state.lagMs !== null && state.lagMs <= state.maxLagMs;
  const error = !state.reachable
    ? `unreachable: ${state.error ?? 'not reached yet'}`
    : `${state.lagMs === null ? 'not caught up yet' : `${state.lagMs} ms behind`}; reads go to the primary`;
  return {
    status: usable ? ('up' as const) : ('down' as const),
    latency_ms: state.latencyMs,
    lag_ms: state.lagMs,
    max_lag_ms: state.maxLagMs,
    ...(usable ? {} : { error }),
  };
}

const baseUrl = (configured: string | undefined, req: { protocol: string; get(name: string): string | undefined }) =>
  configured ?? `${req.protocol}://${req.get('host')}`;

export const routes = [
  defineRoute({
    key: 'GET /',
    access: 'public',
    description: 'The service name and version, where its documentation is, and how much of the API is built.',
    responses: { 200: { description: 'Service information', schema: schemas.root } },
    async handler(_input, { services }, { req }) {
      const base = baseUrl(services.config.publicUrl, req);
      const catalog = req.app.locals.catalog as Catalog;
      return {
        body: {
          name: service.name,
          version: service.version,
          docs_url: `${base}/docs`,
          openapi_url: `${base}/openapi.json`,
          endpoints: catalog,
        },
      };
    },
  }),

  defineRoute({
    key: 'GET /health',
    access: 'public',
    description:
      'Overall status with each dependency: database, migrations, cache store, workers and, when configured, the read replica. ' +
      '503 when the database is unreachable or not migrated.',
    responses: {
      200: { description: 'Healthy, or degraded in an optional part', schema: schemas.health, headers: noStore },
      503: { description: 'The database is down or not migrated', schema: schemas.health, headers: noStore },
    },
    async handler(_input, { db, services }) {
      const [database, migrations, cache, workers] = await Promise.all([
        checkDatabase(db),
        checkMigrations(db, services.migrations),
        checkCache(services.cache),
        checkWorkers(db),
      ]);
      const replica = services.replica && replicaCheck(services.replica.state());
      const essential = database.status === 'up' && migrations.status === 'up';
      const optional = [cache, workers, ...(replica ? [replica] : [])].every((check) => check.status === 'up');
      const status = !essential ? 'down' : optional ? 'ok' : 'degraded';
      return {
        status: essential ? 200 : 503,
        headers: { 'Cache-Control': 'no-store' },
        body: {
          status,
          version: service.version,
          uptime_seconds: uptimeSeconds(),
          checks: {
            database,
            migrations,
            cache: { ...cache, store: services.cache.kind },
            workers,
            ...(replica ? { replica } : {}),
          },
        },
      };
    },
  }),

  defineRoute({
    key: 'GET /health/live',
    access: 'public',
    description:
      'The process is running and answering. Checks nothing else, so a database outage does not get the process restarted.',
    responses: { 200: { description: 'Alive', schema: schemas.live, headers: noStore } },
    async handler() {
      return { headers: { 'Cache-Control': 'no-store' }, body: { status: 'ok', uptime_seconds: uptimeSeconds() } };
    },
  }),

  defineRoute({
    key: 'GET /health/ready',
    access: 'public',
    description:
      'Ready for traffic: the database answers and every migration is applied. 503 (a problem with the checks) until then.',
    responses: {
      200: { description: 'Ready', schema: schemas.ready, headers: noStore },
      503: problemResponse('Not ready: `checks` says which dependency is not', {
        ...noStore,
        'Retry-After': retryAfterHeader,
      }),
    },
    async handler(_input, { db, services }) {
      const [database, migrations] = await Promise.all([checkDatabase(db), checkMigrations(db, services.migrations)]);
      const checks = { database, migrations };
      if (database.status !== 'up' || migrations.status !== 'up') {
        throw new Problem(
          503,
          database.status !== 'up' ? 'The database does not answer.' : 'Migrations are not applied.',
          {
            extensions: { checks },
            headers: { 'Retry-After': String(databaseRetryAfterSeconds), 'Cache-Control': 'no-store' },
          },
        );
      }
      return { headers: { 'Cache-Control': 'no-store' }, body: { status: 'ready', checks } };
    },
  }),

  defineRoute({
    key: 'GET /health/cachestore',
    access: 'public',
    description:
      'Which cache store is in use (in-process, or Redis when REDIS_URL is set) and whether it answers. 503 when it does not.',
    responses: {
      200: { description: 'The cache store answers', schema: schemas.cacheStore, headers: noStore },
      503: problemResponse('The cache store does not answer', noStore),
    },
    async handler(_input, { services }) {
      const result = { ...(await checkCache(services.cache)), store: services.cache.kind };
      if (result.status !== 'up') {
        throw new Problem(503, `The ${result.store} cache store does not answer.`, {
          extensions: { check: result },
          headers: { 'Cache-Control': 'no-store' },
        });
      }
      return { headers: { 'Cache-Control': 'no-store' }, body: result };
    },
  }),
];
