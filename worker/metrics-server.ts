// A worker process's own Prometheus metrics (core/metrics/process.ts: runtime,
// jobs it settled by kind and outcome, their wait and run times), served on
// WORKER_METRICS_PORT for a scraper; workers serve no other HTTP. The
// deployment-wide job gauges are the API's /metrics alone, so that adding
// workers does not add queries per scrape. With METRICS_TOKEN set, the
// scraper sends it as a bearer token, as it does to the API.
import { createHash, timingSafeEqual } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Logger } from '../core/logger.ts';
import { processMetrics } from '../core/metrics/process.ts';

export type MetricsServer = { port: number; close(): Promise<void> };

const digest = (value: string) => createHash('sha256').update(value).digest();

/** Whether the Authorization header is `Bearer <token>` (compared in constant time). */
function holds(header: string | undefined, token: string): boolean {
  const given = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? '';
  return timingSafeEqual(digest(given), digest(token));
}

export async function serveWorkerMetrics(options: {
  port: number;
  token?: string | undefined;
  logger: Logger;
}): Promise<MetricsServer> {
  const { registry } = processMetrics();
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('Not found: the metrics are at GET /metrics\n');
      return;
    }
    const token = options.token;
    if (token !== undefined && !holds(req.headers.authorization, token)) {
      res.writeHead(401, { 'content-type': 'text/plain', 'www-authenticate': 'Bearer' }).end('METRICS_TOKEN needed\n');
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(req.method === 'HEAD' ? '' : text),
      (error: unknown) => {
        options.logger.error({ err: error }, 'worker metrics could not be read');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics could not be read\n');
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  options.logger.info({ port }, 'worker metrics served at /metrics');
  return {
    port,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}
