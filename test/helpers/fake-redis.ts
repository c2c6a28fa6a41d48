// Just enough of the Redis protocol (RESP) on 127.0.0.1 to prove the cache
// store talks to a real socket: PING, INFO, GET, SET, DEL.
import net from 'node:net';

export type FakeRedis = { url: string; commands: string[]; close(): Promise<void> };

export async function startFakeRedis(): Promise<FakeRedis> {
  const data = new Map<string, string>();
  const commands: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buffer = '';
    socket.on('data', (chunk) => {
      buffer += chunk.toString('utf8');
      for (;;) {
        const parsed = parseCommand(buffer);
        if (!parsed) break;
        buffer = buffer.slice(parsed.length);
        const [name = '', ...args] = parsed.args;
        commands.push(name.toUpperCase());
        socket.write(reply(name.toUpperCase(), args, data));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  return {
    url: `redis://127.0.0.1:${port}`,
    commands,
    close: () =>
      new Promise((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

function reply(name: string, args: string[], data: Map<string, string>): string {
  const bulk = (value: string | undefined) =>
    value === undefined ? '$-1\r\n' : `$${Buffer.byteLength(value)}\r\n${value}\r\n`;
  switch (name) {
    case 'PING':
      return '+PONG\r\n';
    case 'INFO':
      return bulk('# Server\r\nredis_version:7.0.0\r\nloading:0\r\n');
    case 'GET':
      return bulk(data.get(args[0] ?? ''));
    case 'SET':
      data.set(args[0] ?? '', args[1] ?? '');
      return '+OK\r\n';
    case 'DEL':
      return `:${data.delete(args[0] ?? '') ? 1 : 0}\r\n`;
    default:
      return '+OK\r\n';
  }
}

/** Parses one RESP array of bulk strings; undefined until it has fully arrived. */
function parseCommand(buffer: string): { args: string[]; length: number } | undefined {
  if (!buffer.startsWith('*')) return undefined;
  let position = buffer.indexOf('\r\n');
  if (position < 0) return undefined;
  const count = Number(buffer.slice(1, position));
  position += 2;
  const args: string[] = [];
  for (let i = 0; i < count; i++) {
    const end = buffer.indexOf('\r\n', position);
    if (end < 0) return undefined;
    const size = Number(buffer.slice(position + 1, end));
    const start = end + 2;
    if (buffer.length < start + size + 2) return undefined;
    args.push(buffer.slice(start, start + size));
    position = start + size + 2;
  }
  return { args, length: position };
}
