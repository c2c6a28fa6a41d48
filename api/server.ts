// The HTTP server around the app, with a shutdown that stops accepting
// connections, lets in-flight requests finish, then closes what is left.
import http from 'node:http';
import type { Services } from '../core/services.ts';
import { createApp } from './app.ts';

export type ApiServer = { server: http.Server; url: string; close(): Promise<void> };

export async function startApi(services: Services): Promise<ApiServer> {
  const { config, logger } = services;
  const server = http.createServer(createApp(services));
  // Longer than a typical load balancer's idle timeout, so it closes first.
  server.keepAliveTimeout = 65_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as { port: number };
  const host = config.host === '0.0.0.0' || config.host === '::' ? 'localhost' : config.host;
  const url = config.publicUrl ?? `http://${host}:${port}`;
  logger.info({ url, port }, 'API listening');
  return {
    server,
    url,
    close: () =>
      new Promise<void>((resolve) => {
        // A keep-alive connection whose request finishes during the drain goes idle, and close() alone would
        // wait for it until the client lets go (up to keepAliveTimeout): idle ones are closed as they appear.
        const idle = setInterval(() => server.closeIdleConnections(), 100);
        server.close(() => {
          clearInterval(idle);
          resolve();
        });
        server.closeIdleConnections();
        // Requests still running after most of the shutdown budget are cut.
        setTimeout(() => server.closeAllConnections(), Math.max(1000, config.shutdownTimeoutMs - 5000)).unref();
      }),
  };
}
