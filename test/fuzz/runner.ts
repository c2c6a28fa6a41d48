// Sends the fuzzer's cases to the test app over a real socket (raw bytes in
// paths and bodies need one) and judges each answer: no 5xx, no answer later
// than the operation's timeout, and nothing the OpenAPI document does not
// describe (the contract checker that wraps every test app says so).
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import type { AddressInfo } from 'node:net';
import { allRoutes } from '../../api/all-routes.ts';
import { takeViolations } from '../helpers/contract.ts';
import type { TestApp } from '../helpers/app.ts';
import { requests, tenantAIntact, type MatrixRequest } from '../access/requests.ts';
import { callers, type CallerName, type World } from '../access/world.ts';
import {
  caseSeed,
  mutate,
  mutationKinds,
  resolver,
  sample,
  seeded,
  type Base,
  type Document,
  type MutationKind,
  type Operation,
  type Wire,
} from './engine.ts';
import { edgeCase } from './edges.ts';
import { snapshotWorld } from './world-state.ts';

export type Finding = { operation: string; seed: number; index: number; caller: CallerName; report: string };

const graceMs = 1_000;

const normal = (path: string) => path.replace(/(.)\/$/, '$1');

/** Who the access matrix lets through to each route (a 2xx there): most cases go as one of them, to get past the token check. */
const admitted = (() => {
  const [header, ...lines] = readFileSync(path.join(import.meta.dirname, '../access/matrix.tsv'), 'utf8')
    .trim()
    .split('\n');
  const columns = header!.split('\t');
  const map = new Map<string, CallerName[]>();
  for (const line of lines) {
    const cells = line.split('\t');
    const callersIn = callers.filter((caller) => /^2/.test(cells[columns.indexOf(caller)] ?? ''));
    map.set(`${cells[0]} ${normal(cells[1]!)}`, callersIn);
  }
  return map;
})();

/** The access matrix's request builder for an operation of the document, if the operation is built. */
function matrixBuilder(operation: Operation) {
  const route = allRoutes.find((candidate) => {
    const [method, path] = candidate.key.split(' ');
    return method === operation.method && normal(path!) === normal(operation.path);
  });
  return route ? requests[route.key] : undefined;
}

const boundary = 'fuzzboundary7d1f';
function multipart(file: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="fuzz.bin"\r\nContent-Type: application/octet-stream\r\n\r\n`,
    ),
    file,
    Buffer.from(`\r\n--${boundary}--\r\n`),
  ]);
}

/** The matrix request (ids of live resources of tenant A) as the base to break; a drawn one where there is none. */
function baseOf(operation: Operation, built: MatrixRequest | undefined, document: Document, seed: number): Base {
  const resolve = resolver(document);
  const random = seeded(seed);
  const params: Record<string, string> = {};
  const parameters = (operation.operation.parameters ?? []).map(resolve);
  for (const parameter of parameters.filter((p: any) => p.in === 'path')) {
    params[parameter.name] = String(sample(parameter.schema, resolve, random));
  }
  const base: Base = { method: operation.method, template: operation.path, params, query: [], headers: {} };
  if (!built) {
    const schema = operation.operation.requestBody?.content?.['application/json']?.schema;
    if (schema) base.body = sample(schema, resolve, random);
    return base;
  }
  const [pathname, query] = built.path.split('?');
  const concrete = normal(pathname!).split('/');
  normal(operation.path)
    .split('/')
    .forEach((segment, index) => {
      const name = /^\{(.+)\}$/.exec(segment)?.[1];
      if (name && concrete[index] !== undefined) params[name] = decodeURIComponent(concrete[index]);
    });
  if (query) base.query = [...new URLSearchParams(query)];
  // Some of the optional query parameters too, so that a broken one meets the others' code paths;
  // not a cursor, which is opaque: a drawn one is never valid, and would stop every case at a 400.
  for (const parameter of parameters.filter((p: any) => p.in === 'query' && p.name !== 'cursor')) {
    if (base.query.some(([name]) => name === parameter.name) || !random.chance(0.3)) continue;
    base.query.push([parameter.name, String(sample(parameter.schema, resolve, random))]);
  }
  for (const [name, value] of Object.entries(built.headers ?? {})) base.headers[name.toLowerCase()] = value;
  if (built.file) base.raw = { bytes: multipart(built.file), type: `multipart/form-data; boundary=${boundary}` };
  else if (built.raw !== undefined) {
    base.raw = {
      bytes: Buffer.from(built.raw),
      type: base.headers['content-type'] ?? 'application/x-www-form-urlencoded',
    };
  } else if (built.body !== undefined) base.body = built.body;
  delete base.headers['content-type'];
  return base;
}

type Answer = { status?: number; type?: string; body: Buffer; elapsedMs: number; error?: string; timedOut?: boolean };

function send(port: number, agent: http.Agent, wire: Wire, timeoutMs: number, streams: boolean): Promise<Answer> {
  const started = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const chunks: Buffer[] = [];
    const finish = (answer: Omit<Answer, 'elapsedMs' | 'body'>) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve({ ...answer, body: Buffer.concat(chunks), elapsedMs: performance.now() - started });
    };
    const headers: Record<string, string | number> = { ...wire.headers };
    if (wire.body) headers['content-length'] = wire.body.length;
    const req = http.request({ host: '127.0.0.1', port, method: wire.method, path: wire.path, headers, agent });
    const timer = setTimeout(() => {
      finish({ error: `no answer within ${timeoutMs} ms`, timedOut: true });
      req.destroy();
    }, timeoutMs);
    req.on('response', (res) => {
      const type = String(res.headers['content-type'] ?? '');
      const answered = { status: res.statusCode, type };
      // An event stream stays open by design: its head and first event are the answer.
      if (streams && type.startsWith('text/event-stream')) {
        res.once('data', (chunk: Buffer) => {
          chunks.push(chunk);
          finish(answered);
          req.destroy();
        });
        setTimeout(() => {
          finish(answered);
          req.destroy();
        }, 300);
        return;
      }
      res.on('data', (chunk: Buffer) => {
        if (chunks.length < 64) chunks.push(chunk);
      });
      res.on('end', () => finish(answered));
      res.on('error', (error) => finish({ ...answered, error: error.message }));
    });
    req.on('error', (error) => finish({ error: `${(error as NodeJS.ErrnoException).code ?? ''} ${error.message}` }));
    req.end(wire.body);
  });
}

/** The request as text a person can read and paste into curl. */
export function describeWire(wire: Wire): string {
  const headers = Object.entries(wire.headers)
    .map(([name, value]) => `${name}: ${name === 'authorization' ? 'Bearer <token>' : value}`)
    .join('; ');
  const path = Buffer.from(wire.path, 'latin1').toString('latin1');
  const body = wire.body
    ? `${wire.body.length} bytes: ${JSON.stringify(wire.body.subarray(0, 200).toString('latin1'))}${wire.body.length > 200 ? '…' : ''}`
    : 'none';
  return `${wire.method} ${path.length > 300 ? `${path.slice(0, 300)}… (${path.length} chars)` : path}\n    headers: ${headers || 'none'}\n    body: ${body}`;
}

export type RunOptions = {
  seed: number;
  cases: number;
  /** Each kind of break once, the unchanged request last. */
  allKinds?: boolean;
  freshBase?: boolean;
  /** Values at the edges of what the document allows (./edges.ts) instead of breaks, sent as a caller let in. */
  edges?: boolean;
};

export type Fuzzer = {
  document: Document;
  /** How many answers of each status the run got, and the slowest answer: the run's summary. */
  statuses: Map<number | 'none', number>;
  slowest: { ms: number; what: string };
  /** Edge values the server refused with a 422 at their own field: valid by the document, refused by a rule it states in words at most. */
  refusedEdges: string[];
  operations: Operation[];
  /** Runs `cases` cases of one operation. */
  run(operation: Operation, options: RunOptions): Promise<Finding[]>;
  close(): Promise<void>;
};

/** Whether a 422 names the place the edge value was put. */
function refusesAt(answer: { status?: number; body: Buffer }, place: { in: string; path: string[] }): boolean {
  if (answer.status !== 422) return false;
  try {
    const errors: { path?: string }[] = JSON.parse(answer.body.toString('utf8')).errors ?? [];
    const at = [place.in, ...place.path].join('.');
    return errors.some((error) => error.path === at);
  } catch {
    return false;
  }
}

export async function startFuzzer(
  t: TestApp,
  world: World,
  document: Document,
  operations: Operation[],
): Promise<Fuzzer> {
  const server = http.createServer(t.app as never);
  // Some cases send megabytes: the server's defaults would cut the slow ones.
  server.requestTimeout = 0;
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const port = (server.address() as AddressInfo).port;
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const resolve = resolver(document);
  // A kind order where the unchanged (possibly destructive) request comes last.
  const statuses = new Map<number | 'none', number>();
  const slowest = { ms: 0, what: '' };
  const refusedEdges: string[] = [];
  const worldState = await snapshotWorld(world);
  const ordered: MutationKind[] = [...mutationKinds.filter((kind) => kind !== 'valid'), 'valid'];

  async function run(operation: Operation, options: RunOptions): Promise<Finding[]> {
    const findings: Finding[] = [];
    const build = matrixBuilder(operation);
    const implemented = operation.operation['x-implemented'] !== false;
    const tokens = new Map<CallerName, { access?: string; refresh?: string }>();
    let built: MatrixRequest | undefined;
    let base: Base | undefined;
    takeViolations();
    for (let index = 0; index < options.cases; index++) {
      const seed = caseSeed(options.seed, operation.key, index);
      const random = seeded(seed);
      const kind = options.edges ? 'edge' : options.allKinds ? ordered[index % ordered.length]! : random.pick(ordered);
      const inside = admitted.get(`${operation.method} ${normal(operation.path)}`) ?? [];
      // Edges are valid input: sent as a caller the route lets in, so that they reach its validation and beyond.
      const caller =
        inside.length && (options.edges || random.chance(0.75)) ? random.pick(inside) : random.pick(callers);
      if (!base || options.freshBase) {
        built = build ? await build(world) : undefined;
        base = baseOf(operation, built, document, seed);
      }
      // Fresh tokens per operation (per case in long runs): a logout or a refresh must not spoil the next call.
      if (!tokens.has(caller) || options.freshBase) tokens.set(caller, await world.credentials(caller));
      const credentials = tokens.get(caller)!;
      const token = built?.bearer === 'refresh' ? credentials.refresh : credentials.access;
      const edge = options.edges ? edgeCase(base, operation.operation, resolve, random) : undefined;
      if (options.edges && !edge) break;
      const { wire, what } = edge ?? mutate(kind as MutationKind, base, operation.operation, resolve, random);
      if (token) wire.headers.authorization = `Bearer ${token}`;
      // The endpoint's own timeout answers 504 at timeoutMs: a second of grace for that answer to arrive.
      const answer = await send(port, agent, wire, operation.timeoutMs + graceMs * 2, operation.streams);
      statuses.set(answer.status ?? 'none', (statuses.get(answer.status ?? 'none') ?? 0) + 1);
      if (answer.elapsedMs > slowest.ms)
        Object.assign(slowest, { ms: answer.elapsedMs, what: `${operation.key} ${kind}: ${what}` });
      if (process.env.FUZZ_VERBOSE)
        process.stderr.write(`${answer.status} ${Math.round(answer.elapsedMs)}ms ${operation.key} ${kind}: ${what}\n`);
      // The contract checker judged the answer as the server ended it.
      await new Promise((done) => setImmediate(done));
      const problems: string[] = [];
      if (answer.status !== undefined && answer.status >= 500 && !(answer.status === 501 && !implemented)) {
        problems.push(`answered ${answer.status}`);
      }
      if (answer.status === undefined) problems.push(`no answer: ${answer.error}`);
      else if (answer.elapsedMs > operation.timeoutMs + graceMs) {
        problems.push(`answered after ${Math.round(answer.elapsedMs)} ms, past the ${operation.timeoutMs} ms timeout`);
      }
      problems.push(...takeViolations());
      if (edge && refusesAt(answer, edge.place)) refusedEdges.push(`${operation.key} as ${caller}: ${what}`);
      if (problems.length > 0) {
        const body = answer.body.subarray(0, 400).toString('utf8');
        findings.push({
          operation: operation.key,
          seed,
          index,
          caller,
          report: [
            `${operation.key} — case ${index} (run seed ${options.seed}, case seed ${seed}), ${kind}: ${what}, as ${caller}`,
            `  ${problems.join('\n  ')}`,
            `  request: ${describeWire(wire)}`,
            `  answer: ${answer.status ?? '-'} ${answer.type ?? ''} ${body}`,
          ].join('\n'),
        });
      }
    }
    if (!(await tenantAIntact(world))) {
      findings.push({
        operation: operation.key,
        seed: options.seed,
        index: -1,
        caller: 'anonymous',
        report: `${operation.key}: tenant A's site is gone after its cases (seed ${options.seed})`,
      });
    }
    // What the cases changed in the world stays with their operation.
    await worldState.restore();
    return findings;
  }

  return {
    document,
    statuses,
    slowest,
    refusedEdges,
    operations,
    run,
    async close() {
      agent.destroy();
      server.closeAllConnections();
      await new Promise((done) => server.close(done));
    },
  };
}
