// What every vendor fake shares, so that each holds only its vendor's rules: a
// node:http server on 127.0.0.1 (a free port) that reads each request whole,
// records it, tells a test waiting for the next one, and on close ends the
// answers it was told to hold (a hanging vendor).
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export type Recorded = {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: http.IncomingHttpHeaders;
  /** The body as text, as it came. */
  raw: string;
  /** The body parsed as JSON, or the text when it is not JSON. */
  body: unknown;
};

export type RecordingServer = {
  url: string;
  requests: Recorded[];
  /** Resolves with the next request that reaches the server. */
  nextRequest(): Promise<Recorded>;
  /** Keeps an answer open until the client leaves or the server closes. */
  hold(res: http.ServerResponse): void;
  close(): Promise<void>;
};

export async function startRecordingServer(
  answer: (request: Recorded, res: http.ServerResponse) => unknown,
): Promise<RecordingServer> {
  const held = new Set<http.ServerResponse>();
  let waiters: ((recorded: Recorded) => void)[] = [];
  const requests: Recorded[] = [];
  const server = http.createServer(async (req, res) => {
    let raw = '';
    for await (const chunk of req) raw += chunk;
    const url = new URL(req.url ?? '/', 'http://localhost');
    let body: unknown = raw;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      // not JSON: kept as text
    }
    const recorded = {
      method: req.method ?? '',
      path: url.pathname,
      query: url.searchParams,
      headers: req.headers,
      raw,
      body,
    };
    requests.push(recorded);
    const notify = waiters;
    waiters = [];
    for (const waiter of notify) waiter(recorded);
    await answer(recorded, res);
  });
  server.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    nextRequest: () => new Promise<Recorded>((resolve) => waiters.push(resolve)),
    hold: (res) => held.add(res),
    async close() {
      for (const res of held) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
