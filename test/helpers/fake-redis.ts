// Just enough of the Redis protocol (RESP) on 127.0.0.1 to prove the cache
// stores talk to a real socket: PING, INFO, GET, SET, DEL, SADD, SMEMBERS,
// (P)EXPIRE (accepted, not applied), SCAN (one page), MULTI/EXEC. Values are
// bytes (kept as latin1 strings, one character a byte).
import net from 'node:net';

export type FakeRedis = { url: string; commands: string[]; close(): Promise<void> };

export async function startFakeRedis(): Promise<FakeRedis> {
  const data = new Map<string, string>();
  const sets = new Map<string, Set<string>>();
  const commands: string[] = [];
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let buffer = '';
    let queued: string[][] | undefined;
    socket.on('data', (chunk) => {
      buffer += chunk.toString('latin1');
      for (;;) {
        const parsed = parseCommand(buffer);
        if (!parsed) break;
        buffer = buffer.slice(parsed.length);
        const [raw = '', ...args] = parsed.args;
        const name = raw.toUpperCase();
        commands.push(name);
        if (name === 'MULTI') {
          queued = [];
          socket.write('+OK\r\n', 'latin1');
        } else if (name === 'EXEC') {
          const replies = (queued ?? []).map(([command = '', ...rest]) => reply(command, rest, data, sets));
          queued = undefined;
          socket.write(`*${replies.length}\r\n${replies.join('')}`, 'latin1');
        } else if (queued) {
          queued.push([name, ...args]);
          socket.write('+QUEUED\r\n', 'latin1');
        } else socket.write(reply(name, args, data, sets), 'latin1');
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

const bulk = (value: string | undefined) => (value === undefined ? '$-1\r\n' : `$${value.length}\r\n${value}\r\n`);
const array = (values: string[]) => `*${values.length}\r\n${values.map(bulk).join('')}`;

function reply(name: string, args: string[], data: Map<string, string>, sets: Map<string, Set<string>>): string {
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
      return `:${args.filter((key) => data.delete(key) || sets.delete(key)).length}\r\n`;
    case 'SADD': {
      const [key = '', ...members] = args;
      const set = sets.get(key) ?? new Set();
      sets.set(key, set);
      const before = set.size;
      for (const member of members) set.add(member);
      return `:${set.size - before}\r\n`;
    }
    case 'SMEMBERS':
      return array([...(sets.get(args[0] ?? '') ?? [])]);
    case 'EXPIRE':
    case 'PEXPIRE':
      return ':1\r\n';
    case 'SCAN': {
      const pattern = args[args.indexOf('MATCH') + 1] ?? '*';
      const matches = new RegExp(`^${pattern.replace(/[.+^${}()|[\]\\]/g, '\\$&').replace(/\*/g, '.*')}$`);
      const keys = [...data.keys(), ...sets.keys()].filter((key) => matches.test(key));
      return `*2\r\n${bulk('0')}${array(keys)}`;
    }
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
