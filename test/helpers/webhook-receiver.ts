// A receiver of outbound webhooks (jobs', content events') on 127.0.0.1: it
// records every request (its headers and raw body, as a receiver must verify
// them) and answers the statuses a test lined up for the path, one per
// request, then 200 (a 3xx with a Location further along the path; `hang`:
// no answer at all).
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { pollUntil } from './poll.ts';

/**
 * The settings under which the worker sends to it: loopback and plain http
 * allowed, two retries a second apart (three attempts in all), each of at
 * most 3 s.
 */
export const receiverEnv = {
  FETCH_ALLOW_LOOPBACK: 'true',
  JOB_WEBHOOK_HTTP_HOSTS: '127.0.0.1',
  JOB_WEBHOOK_RETRY_SECONDS: '1,1',
  JOB_WEBHOOK_TIMEOUT_MS: '3000',
};

/** A status to line up for a request that is never answered. */
export const hang = 0;

export type Received = { path: string; headers: Record<string, string>; body: string };

export type Receiver = {
  url: string;
  /** Answer the next requests to `path` with these statuses, in turn. */
  answer(path: string, ...statuses: number[]): void;
  /** What `path` has received so far. */
  at(path: string): Received[];
  /** Waits until `path` has received `count` requests (generously: the worker runs in its own time). */
  waitFor(path: string, count: number): Promise<Received[]>;
  close(): Promise<void>;
};

export async function startReceiver(): Promise<Receiver> {
  const received: Received[] = [];
  const lined = new Map<string, number[]>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const path = req.url ?? '/';
      received.push({
        path,
        headers: req.headers as Record<string, string>,
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const status = lined.get(path)?.shift() ?? 200;
      if (status === hang) return;
      // A redirect points further along, where nothing should ever arrive.
      const moved = status >= 300 && status < 400 ? { location: `${path}/moved` } : {};
      res.writeHead(status, { 'content-type': 'text/plain', ...moved }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const at = (path: string) => received.filter((request) => request.path === path);
  return {
    url: `http://127.0.0.1:${port}`,
    answer: (path, ...statuses) => lined.set(path, statuses),
    at,
    waitFor: (path, count) =>
      pollUntil(
        async () => at(path),
        (requests) => requests.length >= count,
        { tries: 600, everyMs: 50 },
      ),
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
