// Every response a test gets is checked against the OpenAPI document: its
// status must be documented for the operation, its media type among the
// documented ones, a JSON body valid against the documented schema, the
// documented required headers present, and none of the headers clients act
// on (Location, Retry-After, ETag...) sent undocumented. A violation fails the
// test that caused it (see ./contract-setup.ts), so an answer the document
// does not tell about cannot creep in.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';

type Ref = { $ref: string };
type Header = { required?: boolean };
type Response = { headers?: Record<string, Header | Ref>; content?: Record<string, { schema: unknown }> };
type Operation = { responses: Record<string, Response | Ref> };
type Document = {
  paths: Record<string, Record<string, Operation>>;
  components?: { responses?: Record<string, Response>; headers?: Record<string, Header> };
};

/** Headers a client acts on: sending one that the document does not mention is a violation. */
const watchedHeaders = [
  'location',
  'retry-after',
  'etag',
  'last-modified',
  'content-range',
  'accept-ranges',
  'www-authenticate',
  'idempotent-replayed',
  'preference-applied',
  'cache-control',
  'x-request-id',
];

const violations: string[] = [];

/** What was found wrong since the last call; the setup file fails each test that leaves any. */
export function takeViolations(): string[] {
  return violations.splice(0);
}

type Matcher = { method: string; pattern: RegExp; path: string; operation: Operation; literals: number };

function matchers(document: Document): Matcher[] {
  const list: Matcher[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    const segments = path.replace(/(.)\/$/, '$1').split('/');
    const pattern = new RegExp(
      `^${segments.map((segment) => (segment.startsWith('{') ? '[^/]+' : segment.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('/')}/?$`,
    );
    const literals = segments.filter((segment) => !segment.startsWith('{')).length;
    for (const [method, operation] of Object.entries(item)) list.push({ method, pattern, path, operation, literals });
  }
  // Literal segments first, as the router matches them: /admin/jobs before /{site_identifier}/jobs.
  return list.sort((a, b) => b.literals - a.literals);
}

export function contractChecker(document: Document) {
  const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: true });
  addFormats.default(ajv);
  ajv.addSchema(document, 'openapi.json');
  const compiled = new Map<string, ValidateFunction>();
  const validator = (pointer: string) => {
    let validate = compiled.get(pointer);
    if (!validate) compiled.set(pointer, (validate = ajv.compile({ $ref: `openapi.json#${pointer}` })));
    return validate;
  };
  const routes = matchers(document);
  const escape = (text: string) => text.replace(/~/g, '~0').replace(/\//g, '~1');
  /** A component the document refers to (#/components/responses/NotFound), and its JSON pointer. */
  const resolve = <T>(value: T | Ref, pointer: string): { value: T; pointer: string } => {
    if (!value || typeof value !== 'object' || !('$ref' in value)) return { value: value, pointer };
    const path = value.$ref.replace(/^#/, '');
    const found = path
      .split('/')
      .slice(1)
      .reduce<unknown>((node, part) => (node as Record<string, unknown>)?.[part], document);
    return { value: found as T, pointer: path };
  };

  function check(req: IncomingMessage, res: ServerResponse, body: Buffer | undefined): void {
    const method = (req.method ?? 'GET').toLowerCase();
    const path = (req.url ?? '/').split('?')[0]!;
    // The path first, whatever the method (OpenAPI matches concrete paths before templated ones), then its method.
    const item = routes.find((route) => route.pattern.test(path));
    const found = item && routes.find((route) => route.path === item.path && route.method === method);
    // Paths outside the document (/docs, an unknown route, a method the path does not have) are not an operation's answers.
    if (!found) return;
    const where = `${req.method} ${path} → ${res.statusCode}`;
    const listed = found.operation.responses[String(res.statusCode)];
    if (!listed) {
      violations.push(`${where}: status not documented for ${method.toUpperCase()} ${found.path}`);
      return;
    }
    const { value: documented, pointer: responsePointer } = resolve<Response>(
      listed,
      `/paths/${escape(found.path)}/${method}/responses/${res.statusCode}`,
    );
    const names = new Set(Object.keys(documented.headers ?? {}).map((name) => name.toLowerCase()));
    for (const header of watchedHeaders) {
      if (res.hasHeader(header) && !names.has(header)) violations.push(`${where}: header ${header} not documented`);
    }
    for (const [name, spec] of Object.entries(documented.headers ?? {})) {
      if (resolve<Header>(spec, '').value.required && !res.hasHeader(name)) {
        violations.push(`${where}: documented header ${name} missing`);
      }
    }
    const type = String(res.getHeader('content-type') ?? '')
      .split(';')[0]!
      .trim();
    const hasBody = body !== undefined && body.length > 0 && method !== 'head';
    if (!hasBody) return;
    const content = documented.content ?? {};
    if (!(type in content)) {
      violations.push(
        `${where}: body of type ${type || 'none'} not documented (${Object.keys(content).join(', ') || 'no body'})`,
      );
      return;
    }
    if (type !== 'application/json' && type !== 'application/problem+json') return;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      violations.push(`${where}: body is not JSON`);
      return;
    }
    const pointer = `${responsePointer}/content/${escape(type)}/schema`;
    const validate = validator(pointer);
    if (!validate(parsed)) {
      const errors = (validate.errors ?? [])
        .slice(0, 5)
        .map((error) => `${error.instancePath || '/'} ${error.message}`);
      violations.push(`${where}: body does not match the schema: ${errors.join('; ')}`);
    }
  }

  /** Wraps a request listener so each of its responses is checked as it ends. */
  return <H extends (req: IncomingMessage, res: ServerResponse) => void>(handler: H): H => {
    const checked = (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      let size = 0;
      const keep = (chunk: unknown, encoding?: unknown) => {
        if (chunk === undefined || chunk === null || typeof chunk === 'function') return;
        // Enough to judge a JSON body; a streamed file is judged by its type alone.
        if (size > 1_000_000) return;
        const buffer = Buffer.isBuffer(chunk)
          ? chunk
          : Buffer.from(chunk as string, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8');
        size += buffer.length;
        chunks.push(buffer);
      };
      const write = res.write.bind(res) as (...args: unknown[]) => boolean;
      const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
      res.write = ((chunk: unknown, ...rest: unknown[]) => {
        keep(chunk, rest[0]);
        return write(chunk, ...rest);
      }) as typeof res.write;
      res.end = ((chunk?: unknown, ...rest: unknown[]) => {
        keep(chunk, rest[0]);
        try {
          check(req, res, chunks.length ? Buffer.concat(chunks) : undefined);
        } catch (error) {
          violations.push(`${req.method} ${req.url}: the check failed: ${(error as Error).message}`);
        }
        return end(chunk, ...rest);
      }) as typeof res.end;
      handler(req, res);
    };
    return Object.assign<typeof checked, H>(checked, handler);
  };
}
