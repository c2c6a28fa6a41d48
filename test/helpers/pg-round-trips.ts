// A TCP relay in front of PostgreSQL that counts round trips: each simple
// query ('Q') and each Sync ('S', which ends an extended-protocol batch) is
// one wait for the server's ReadyForQuery. Counting on the wire sees what an
// interceptor cannot: the driver's own statements (a connection reset on
// release, say). Tests assert counts with it; the bench reports them.
import net from 'node:net';

export type RoundTripCounter = {
  /** A connection URL like `url`, through the counter. */
  url: string;
  /** Round trips since start or the last reset. */
  count(): number;
  reset(): void;
  close(): Promise<void>;
};

/** Reads the client's stream as PostgreSQL frontend messages and counts Query and Sync. */
function counting(onRoundTrip: () => void) {
  let buffer = Buffer.alloc(0);
  let started = false;
  return (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    for (;;) {
      if (!started) {
        // Startup, SSLRequest and GSSENCRequest have no type byte: int32 length, then the body.
        if (buffer.length < 8) return;
        const length = buffer.readInt32BE(0);
        const code = buffer.readInt32BE(4);
        if (buffer.length < length) return;
        buffer = buffer.subarray(length);
        // 80877103 asks for SSL and 80877104 for GSS encryption; a startup message follows either refusal.
        if (code !== 80877103 && code !== 80877104) started = true;
        continue;
      }
      if (buffer.length < 5) return;
      const length = buffer.readInt32BE(1);
      if (buffer.length < length + 1) return;
      const type = String.fromCharCode(buffer[0]!);
      if (type === 'Q' || type === 'S') onRoundTrip();
      buffer = buffer.subarray(length + 1);
    }
  };
}

export async function startRoundTripCounter(databaseUrl: string): Promise<RoundTripCounter> {
  const target = new URL(databaseUrl);
  let trips = 0;
  const sockets = new Set<net.Socket>();
  const server = net.createServer((client) => {
    const upstream = net.connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
      socket.on('error', () => socket.destroy());
    }
    const count = counting(() => trips++);
    client.on('data', count);
    client.pipe(upstream).pipe(client);
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = new URL(databaseUrl);
  url.hostname = '127.0.0.1';
  url.port = String((server.address() as net.AddressInfo).port);
  // The relay does not speak TLS; the counted connection is local anyway.
  url.searchParams.delete('sslmode');
  return {
    url: url.toString(),
    count: () => trips,
    reset: () => {
      trips = 0;
    },
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}
