// The fuzzer's pieces that need no app: a seeded random source, values drawn
// from the OpenAPI document's schemas, and the catalogue of ways to break a
// request. Everything is drawn from the seed alone, so a failure printed with
// its seed and case number is the same request when run again.

/** mulberry32: small, fast, and the same sequence for the same seed on every machine. */
export function seeded(seed: number) {
  let state = seed >>> 0;
  const next = () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const int = (n: number) => Math.floor(next() * n);
  return {
    next,
    int,
    pick: <T>(items: readonly T[]): T => items[int(items.length)]!,
    chance: (p: number) => next() < p,
  };
}
export type Random = ReturnType<typeof seeded>;

/** A seed for one case of one operation, from the run's seed: any case can be replayed alone. */
export function caseSeed(runSeed: number, operationKey: string, index: number): number {
  let hash = (runSeed ^ 0x9e3779b9) >>> 0;
  for (const char of `${operationKey}#${index}`) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
  return hash;
}

type Schema = Record<string, any>;
export type Document = { paths: Record<string, Record<string, any>>; components?: Record<string, any> };

export type Operation = {
  /** METHOD /path as the document names it. */
  key: string;
  method: string;
  path: string;
  operation: Record<string, any>;
  timeoutMs: number;
  /** Answers with an event stream: read its head, then hang up. */
  streams: boolean;
};

export function operationsOf(document: Document): Operation[] {
  const list: Operation[] = [];
  for (const [path, item] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(item)) {
      const success = Object.entries(operation.responses ?? {}).filter(([status]) => status.startsWith('2'));
      const streams = success.some(([, response]: [string, any]) => 'text/event-stream' in (response?.content ?? {}));
      list.push({
        key: `${method.toUpperCase()} ${path}`,
        method: method.toUpperCase(),
        path,
        operation,
        timeoutMs: (operation['x-timeout-seconds'] ?? 30) * 1000,
        streams,
      });
    }
  }
  return list;
}

export function resolver(document: Document) {
  return function resolve(schema: Schema | undefined): Schema {
    let current = schema ?? {};
    for (let hops = 0; current.$ref && hops < 20; hops++) {
      current = current.$ref
        .replace(/^#\//, '')
        .split('/')
        .reduce((node: any, part: string) => node?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], document);
    }
    return current ?? {};
  };
}

/** A value that the schema would probably accept: the starting point the mutations break. */
export function sample(
  schema: Schema | undefined,
  resolve: (s?: Schema) => Schema,
  random: Random,
  depth = 0,
): unknown {
  const s = resolve(schema);
  if ('const' in s) return s.const;
  if (s.enum) return random.pick(s.enum);
  if (s.default !== undefined && random.chance(0.5)) return s.default;
  const variants = s.oneOf ?? s.anyOf;
  if (variants) return sample(random.pick(variants), resolve, random, depth + 1);
  if (s.allOf) return Object.assign({}, ...s.allOf.map((part: Schema) => sample(part, resolve, random, depth + 1)));
  const type = Array.isArray(s.type) ? (s.type.find((t: string) => t !== 'null') ?? 'null') : s.type;
  switch (type) {
    case 'string':
      return sampleString(s, random);
    case 'integer':
      return Math.max(s.minimum ?? 0, Math.min(s.maximum ?? 100, 1 + random.int(10)));
    case 'number':
      return Math.max(s.minimum ?? 0, Math.min(s.maximum ?? 100, random.next() * 10));
    case 'boolean':
      return random.chance(0.5);
    case 'null':
      return null;
    case 'array':
      if (depth > 4) return [];
      return Array.from({ length: Math.max(s.minItems ?? 0, 1) }, () => sample(s.items, resolve, random, depth + 1));
    default: {
      if (depth > 4) return {};
      const object: Record<string, unknown> = {};
      const required = new Set<string>(s.required ?? []);
      for (const [name, property] of Object.entries<Schema>(s.properties ?? {})) {
        if (required.has(name) || random.chance(0.5)) object[name] = sample(property, resolve, random, depth + 1);
      }
      return object;
    }
  }
}

function sampleString(s: Schema, random: Random): string {
  const uuid = () => 'xxxxxxxx-xxxx-4xxx-8xxx-xxxxxxxxxxxx'.replace(/x/g, () => random.int(16).toString(16));
  switch (s.format) {
    case 'uuid':
      return uuid();
    case 'email':
      return `fuzz${random.int(1e6)}@example.com`;
    case 'date-time':
      return new Date(Date.UTC(2026, random.int(12), 1 + random.int(28))).toISOString();
    case 'date':
      return '2026-01-15';
    case 'uri':
    case 'url':
      return 'https://example.com/fuzz';
  }
  const length = Math.max(s.minLength ?? 1, Math.min(s.maxLength ?? 12, 12));
  return 'fuzz'.padEnd(length, 'z').slice(0, Math.max(length, 1));
}

/** What a request is made of before it is broken. */
export type Base = {
  method: string;
  /** The path's template (/api/sites/{site_id}) and the values that fill it. */
  template: string;
  params: Record<string, string>;
  query: [string, string][];
  /** A JSON body, or raw bytes with their type (a signed webhook, a form). */
  body?: unknown;
  raw?: { bytes: Buffer; type: string };
  bodyType?: string;
  headers: Record<string, string>;
};

/** The request as it goes on the wire; `path` is already encoded, and may hold raw bytes (latin1). */
export type Wire = { method: string; path: string; headers: Record<string, string>; body?: Buffer };

const encode = (value: string) => encodeURIComponent(value);

export function toWire(base: Base, pathOverrides: Record<string, string> = {}, queryRaw?: string): Wire {
  const path = base.template.replace(/\{([^}]+)\}/g, (_, name: string) =>
    name in pathOverrides ? pathOverrides[name]! : encode(base.params[name] ?? 'x'),
  );
  const query = queryRaw ?? base.query.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&');
  const headers = { ...base.headers };
  let body: Buffer | undefined;
  if (base.raw) {
    body = base.raw.bytes;
    headers['content-type'] = base.raw.type;
  } else if (base.body !== undefined) {
    body = Buffer.from(JSON.stringify(base.body));
    headers['content-type'] = 'application/json';
  }
  return { method: base.method, path: query ? `${path}?${query}` : path, headers, body };
}

/** Strings that have broken id handling somewhere: traversal, SQL, encodings, sizes, prototype names. */
export const hostileIds = [
  '..%2F..%2F..%2Fetc%2Fpasswd',
  '..',
  '%2e%2e',
  "1'%20OR%20'1'%3D'1",
  '1%3BDROP%20TABLE%20users--',
  '%27%29%3B--',
  '%00',
  'a%00b',
  '%FF%FE',
  '%C0%AF',
  '%E2%82',
  '%ED%A0%80',
  '\u00ff\u00fe',
  'x'.repeat(5000),
  '9'.repeat(40),
  '-1',
  '0',
  '2147483648',
  '9223372036854775808',
  '1e309',
  'NaN',
  '00000000-0000-0000-0000-000000000000',
  'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF',
  '__proto__',
  'constructor',
  'null',
  '%25',
  '%',
  '%u0000',
  '%0D%0ASet-Cookie%3A%20x%3D1',
];

/** Sort values a forged cursor may hold: of no column's type, out of each type's range. */
export const hostileCursorValues: unknown[] = [
  'abc',
  '',
  '0000-01-01T00:00:00Z',
  '0000-01-01T00:00:00.000Z',
  '-000001-01-01T00:00:00Z',
  '+275760-09-13T00:00:00Z',
  '2026-02-30T00:00:00Z',
  '2026-01-01T00:00:00+99:99',
  'infinity',
  '99999999999999999999',
  '-9223372036854775809',
  '1e309',
  '1.5',
  'NaN',
  null,
  5,
  [],
  {},
  'a\u0000b',
  'x'.repeat(1000),
];

/** Dates that are valid ISO 8601 (or nearly) but that PostgreSQL or Date may not take. */
export const hostileDates = [
  '0000-01-01T00:00:00Z',
  '0000-01-01',
  '0001-01-01T00:00:00+14:00',
  '9999-12-31T23:59:59-14:00',
  '9999-12-31',
  '+275760-09-13T00:00:00Z',
  '-000001-01-01T00:00:00Z',
  '2026-02-29T00:00:00Z',
  '2026-02-29',
  '2026-13-01',
  '2026-01-01T24:00:00Z',
  '2026-01-01T23:59:60Z',
  '2026-01-01T00:00:00.1234567890123Z',
  '2026-01-01T00:00:00+99:99',
  '1e309',
  'infinity',
  '-infinity',
  'epoch',
  'now',
  'today',
  'allballs',
  '1970-01-01T00:00:00Z',
];

/** Numbers past every integer width, and strings that parse to something strange. */
export const hugeNumbers: { json: string; query: string }[] = [
  { json: '2147483648', query: '2147483648' },
  { json: '-2147483649', query: '-2147483649' },
  { json: '9223372036854775808', query: '9223372036854775808' },
  { json: '-9223372036854775809', query: '-9223372036854775809' },
  { json: '1e309', query: '1e309' },
  { json: '-1e309', query: '-1e309' },
  { json: '1e-400', query: '1e-400' },
  { json: '"NaN"', query: 'NaN' },
  { json: '"Infinity"', query: 'Infinity' },
  { json: '"-Infinity"', query: '-Infinity' },
  { json: '1.5', query: '1.5' },
  { json: '-0', query: '-0' },
  { json: '"0x10"', query: '0x10' },
  { json: '"1e3"', query: '1e3' },
  { json: '9'.repeat(400), query: '9'.repeat(400) },
  { json: '1.7976931348623157e308', query: '1.7976931348623157e308' },
];

const deep = (levels: number, open: string, close: string, inner = '1') =>
  `${open.repeat(levels)}${inner}${close.repeat(levels)}`;

/** A JSON value (text) of another type than the schema wants. */
function wrongTypeJson(schema: Schema, random: Random): string {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  const candidates: Record<string, string[]> = {
    string: ['12345', 'true', '{}', '[]', '["a"]', 'null'],
    integer: ['"12"', '"abc"', 'true', '[]', '{}', '1.5', 'null'],
    number: ['"12.5"', '"abc"', 'false', '[1]', '{}', 'null'],
    boolean: ['"true"', '1', '0', '"yes"', '[]', 'null'],
    array: ['"a,b"', '{}', '1', '{"0":"a"}', 'null'],
    object: ['"{}"', '[]', '1', 'true', 'null'],
  };
  return random.pick(candidates[type ?? 'object'] ?? candidates.object!);
}

/** Query values of another type than the parameter wants, or the parameter twice (an array). */
function wrongTypeQuery(schema: Schema, random: Random): string[] {
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type;
  if (random.chance(0.3)) return ['1', '2'];
  const byType: Record<string, string[]> = {
    integer: ['abc', '1.5', '', ' ', 'true', '[]', '1,2', '0b11'],
    number: ['abc', '', 'true', '1,5'],
    boolean: ['yes', '2', '', 'TRUE'],
    string: ['', ' ', '[]', '{}'],
  };
  return [random.pick(byType[type ?? 'string'] ?? byType.string!)];
}

export const mutationKinds = [
  'valid',
  'wrong-type',
  'huge-string',
  'deep-nesting',
  'nul',
  'invalid-utf8',
  'huge-number',
  'unknown-fields',
  'long-array',
  'hostile-id',
  'content-type',
  'header',
  'cursor',
  'date',
  'form',
] as const;
export type MutationKind = (typeof mutationKinds)[number];

type Field = { name: string; schema: Schema };

/** The body's top-level properties, from the schema of its JSON media type. */
function bodyFields(operation: Record<string, any>, resolve: (s?: Schema) => Schema): Field[] {
  const content = operation.requestBody?.content ?? {};
  const schema = resolve(content['application/json']?.schema);
  const fields: Field[] = [];
  for (const part of [schema, ...(schema.allOf ?? []).map(resolve)]) {
    for (const [name, property] of Object.entries<Schema>(part.properties ?? {})) {
      fields.push({ name, schema: resolve(property) });
    }
  }
  return fields;
}

function headerFields(operation: Record<string, any>, resolve: (s?: Schema) => Schema): Field[] {
  return (operation.parameters ?? [])
    .map(resolve)
    .filter((p: Schema) => p.in === 'header')
    .map((p: Schema) => ({ name: p.name, schema: resolve(p.schema) }));
}

/** Header values (latin1: what HTTP can carry) that a parser of the header may choke on. */
export const hostileHeaders = [
  '',
  ' ',
  'x'.repeat(8_000),
  '\u00ff\u00fe',
  '"',
  'W/"',
  '*',
  '"a", W/"b", *',
  '-1',
  '99999999999999999999',
  '1e309',
  "' OR 1=1--",
  'v1,',
  'v1,!!!notbase64',
  't=,v1=',
  // A wait within reach only: a huge one is capped at the timeout, and waits it out, by design.
  'respond-async, wait=1',
  'wait=-1',
  'wait=abc',
  'wait=',
  'wait=0.5',
  'return=minimal; return=representation',
  '00000000-0000-0000-0000-000000000000',
];

function queryFields(operation: Record<string, any>, resolve: (s?: Schema) => Schema): Field[] {
  return (operation.parameters ?? [])
    .map(resolve)
    .filter((p: Schema) => p.in === 'query')
    .map((p: Schema) => ({ name: p.name, schema: resolve(p.schema) }));
}

const typeOf = (schema: Schema) =>
  Array.isArray(schema.type) ? schema.type.find((t: string) => t !== 'null') : schema.type;

const marker = '__fuzz_marker__';

/** The body as JSON text with one property's value replaced by the given JSON text. */
function bodyWith(base: Base, name: string, json: string): string {
  const object = base.body && typeof base.body === 'object' && !Array.isArray(base.body) ? { ...base.body } : {};
  (object as Record<string, unknown>)[name] = marker;
  return JSON.stringify(object).replace(JSON.stringify(marker), json);
}

/** Where in the body a value sits below the top level (body.blocks.0.text), up to a few levels down. */
function nestedPaths(value: unknown, path: string[] = [], found: string[][] = []): string[][] {
  if (path.length > 1) found.push(path);
  if (path.length < 5 && value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value).slice(0, 20)) nestedPaths(item, [...path, key], found);
  }
  return found;
}

/** The body as JSON text with the value at a nested path replaced; undefined when the body has no depth. */
function nestedBodyWith(base: Base, random: Random, json: string): { text: string; at: string } | undefined {
  const paths = nestedPaths(base.body);
  if (paths.length === 0) return undefined;
  const path = random.pick(paths);
  const copy = structuredClone(base.body) as Record<string, any>;
  const parent = path.slice(0, -1).reduce((node, key) => node[key], copy);
  parent[path.at(-1)!] = marker;
  return { text: JSON.stringify(copy).replace(JSON.stringify(marker), json), at: path.join('.') };
}

const json = (text: string | Buffer): { bytes: Buffer; type: string } => ({
  bytes: Buffer.isBuffer(text) ? text : Buffer.from(text),
  type: 'application/json',
});

/**
 * One broken request: the base changed in the way `kind` names, at a place
 * drawn from the operation's schema. Returns the wire request and a line
 * saying what was broken where.
 */
export function mutate(
  kind: MutationKind,
  base: Base,
  operation: Record<string, any>,
  resolve: (s?: Schema) => Schema,
  random: Random,
): { wire: Wire; what: string } {
  const fields = bodyFields(operation, resolve);
  const queries = queryFields(operation, resolve);
  const takesJson = 'application/json' in (operation.requestBody?.content ?? {});
  const params = Object.keys(base.params);
  // Where to break: the JSON body when the operation takes one, else the query, else the path.
  const inBody = takesJson && (queries.length === 0 || random.chance(0.7));
  const field = (list: Field[], want?: (f: Field) => boolean) => {
    const fitting = want ? list.filter(want) : list;
    return fitting.length ? random.pick(fitting) : list.length ? random.pick(list) : undefined;
  };
  const withBody = (raw: { bytes: Buffer; type: string }) => toWire({ ...base, raw });
  const withQuery = (name: string, values: string[], encoded = false) => {
    const kept = base.query.filter(([key]) => key !== name).map(([k, v]) => `${encode(k)}=${encode(v)}`);
    const added = values.map((value) => `${encode(name)}=${encoded ? value : encode(value)}`);
    return toWire(base, {}, [...kept, ...added].join('&'));
  };

  switch (kind) {
    case 'valid':
      return { wire: toWire(base), what: 'the request the access matrix sends, unchanged' };

    case 'wrong-type': {
      if (inBody) {
        const value = random.pick(['"x"', '1', '[]', '{}', 'null', 'true', '-1e309']);
        const nested = random.chance(0.4) ? nestedBodyWith(base, random, value) : undefined;
        if (nested) return { wire: withBody(json(nested.text)), what: `body.${nested.at} = ${value}` };
        const f = field(fields);
        if (f) {
          const value = wrongTypeJson(f.schema, random);
          return { wire: withBody(json(bodyWith(base, f.name, value))), what: `body.${f.name} = ${value}` };
        }
        const whole = random.pick(['[]', '"text"', '1', 'null', 'true']);
        return { wire: withBody(json(whole)), what: `body = ${whole}` };
      }
      const q = field(queries);
      if (q) {
        const values = wrongTypeQuery(q.schema, random);
        return { wire: withQuery(q.name, values), what: `query ${q.name} = ${JSON.stringify(values)}` };
      }
      return mutate('hostile-id', base, operation, resolve, random);
    }

    case 'huge-string': {
      const size = random.pick([10_000, 100_000, 1_000_000, 3_000_000]);
      if (inBody) {
        const f = field(fields, (x) => typeOf(x.schema) === 'string');
        const name = f?.name ?? 'fuzz_unknown';
        return {
          wire: withBody(json(bodyWith(base, name, JSON.stringify('é'.repeat(size / 2))))),
          what: `body.${name} = a string of ${size} bytes`,
        };
      }
      const q = field(queries, (x) => typeOf(x.schema) === 'string');
      if (q) return { wire: withQuery(q.name, ['q'.repeat(6_000)]), what: `query ${q.name} = 6000 characters` };
      if (params.length) {
        const name = random.pick(params);
        return { wire: toWire(base, { [name]: 'p'.repeat(6_000) }), what: `path ${name} = 6000 characters` };
      }
      return { wire: withQuery('fuzz', ['q'.repeat(6_000)]), what: 'query fuzz = 6000 characters' };
    }

    case 'deep-nesting': {
      const levels = random.pick([100, 1_000, 10_000, 100_000]);
      const [open, close] = random.pick([
        ['[', ']'],
        ['{"a":', '}'],
      ] as const);
      const nested = deep(levels, open, close);
      if (takesJson) {
        const f = field(fields, (x) => ['object', 'array'].includes(typeOf(x.schema)));
        if (f && random.chance(0.7)) {
          return {
            wire: withBody(json(bodyWith(base, f.name, nested))),
            what: `body.${f.name} nested ${levels} deep with ${open}`,
          };
        }
        return { wire: withBody(json(nested)), what: `body nested ${levels} deep with ${open}` };
      }
      // qs-style brackets in the query, in case a parser ever expands them.
      const key = `a${'[b]'.repeat(Math.min(levels, 1_000))}`;
      return { wire: toWire(base, {}, `${encode(key)}=1`), what: `query key with ${Math.min(levels, 1000)} brackets` };
    }

    case 'nul': {
      if (inBody) {
        const f = field(fields, (x) => typeOf(x.schema) === 'string');
        const name = f?.name ?? 'fuzz_unknown';
        const value = random.pick(['"a\\u0000b"', '"\\u0000"', '"x\\u0000\\u0001\\u001f"']);
        return { wire: withBody(json(bodyWith(base, name, value))), what: `body.${name} = ${value}` };
      }
      const q = field(queries);
      if (q && (params.length === 0 || random.chance(0.5))) {
        return { wire: withQuery(q.name, ['a%00b'], true), what: `query ${q.name} = a%00b` };
      }
      if (params.length) {
        const name = random.pick(params);
        return { wire: toWire(base, { [name]: `${encode(base.params[name]!)}%00` }), what: `path ${name} + %00` };
      }
      return { wire: withQuery('fuzz', ['%00'], true), what: 'query fuzz = %00' };
    }

    case 'invalid-utf8': {
      const bytes = random.pick([
        [0xff, 0xfe],
        [0xc0, 0xaf],
        [0xed, 0xa0, 0x80],
        [0xe2, 0x82],
        [0xf8, 0x88, 0x80, 0x80, 0x80],
      ]);
      const hex = bytes.map((b) => `%${b.toString(16).toUpperCase()}`).join('');
      const where = random.int(3);
      if (where === 0 && takesJson) {
        const f = field(fields, (x) => typeOf(x.schema) === 'string');
        const name = f?.name ?? 'fuzz_unknown';
        const text = bodyWith(base, name, '"__BYTES__"');
        const [before, after] = text.split('__BYTES__');
        return {
          wire: withBody(json(Buffer.concat([Buffer.from(before!), Buffer.from(bytes), Buffer.from(after!)]))),
          what: `body.${name} holds raw bytes ${hex}`,
        };
      }
      if (where === 1 && params.length) {
        const name = random.pick(params);
        // Percent-encoded, or the bytes themselves on the wire.
        const raw = random.chance(0.5) ? hex : Buffer.from(bytes).toString('latin1');
        return {
          wire: toWire(base, { [name]: raw }),
          what: `path ${name} = bytes ${hex}${raw === hex ? '' : ' (raw)'}`,
        };
      }
      const q = field(queries);
      const name = q?.name ?? 'fuzz';
      return { wire: withQuery(name, [`a${hex}`], true), what: `query ${name} = a${hex}` };
    }

    case 'huge-number': {
      const number = random.pick(hugeNumbers);
      const nested = inBody && random.chance(0.3) ? nestedBodyWith(base, random, number.json) : undefined;
      if (nested) return { wire: withBody(json(nested.text)), what: `body.${nested.at} = ${number.json}` };
      if (inBody) {
        const f = field(fields, (x) => ['integer', 'number'].includes(typeOf(x.schema)));
        const name = f?.name ?? random.pick(fields)?.name ?? 'fuzz_unknown';
        return { wire: withBody(json(bodyWith(base, name, number.json))), what: `body.${name} = ${number.json}` };
      }
      const q = field(queries, (x) => ['integer', 'number'].includes(typeOf(x.schema)));
      if (q) return { wire: withQuery(q.name, [number.query]), what: `query ${q.name} = ${number.query}` };
      if (params.length) {
        const name = random.pick(params);
        return { wire: toWire(base, { [name]: encode(number.query) }), what: `path ${name} = ${number.query}` };
      }
      return { wire: withQuery('limit', [number.query]), what: `query limit = ${number.query}` };
    }

    case 'unknown-fields': {
      if (takesJson) {
        const object = base.body && typeof base.body === 'object' && !Array.isArray(base.body) ? base.body : {};
        const extra = random.pick([
          '"__proto__":{"is_global_admin":true,"polluted":1}',
          '"constructor":{"prototype":{"polluted":1}}',
          '"fuzz_unknown":"x","tenant_id":"00000000-0000-0000-0000-000000000000"',
          '"id":"00000000-0000-0000-0000-000000000000","created_at":"1970-01-01T00:00:00Z"',
        ]);
        const text = JSON.stringify(object);
        const body = text === '{}' ? `{${extra}}` : `${text.slice(0, -1)},${extra}}`;
        return { wire: withBody(json(body)), what: `body with ${extra}` };
      }
      const extra = random.pick(['__proto__[x]=1', 'constructor=1', 'fuzz_unknown=1', 'tenant_id=%27']);
      const query = [toWire(base).path.split('?')[1], extra].filter(Boolean).join('&');
      return { wire: toWire(base, {}, query), what: `query with ${extra}` };
    }

    case 'long-array': {
      const length = random.pick([1_000, 100_000, 300_000]);
      if (takesJson) {
        const f = field(fields, (x) => typeOf(x.schema) === 'array');
        const item = f ? JSON.stringify(sample(f.schema.items, resolve, random) ?? 'x') : '"x"';
        const array = `[${new Array(length).fill(item).join(',')}]`;
        if (f)
          return { wire: withBody(json(bodyWith(base, f.name, array))), what: `body.${f.name} of ${length} items` };
        return { wire: withBody(json(array)), what: `body an array of ${length} items` };
      }
      const q = field(queries);
      const name = q?.name ?? 'fuzz';
      const count = Math.min(length, 500);
      return {
        wire: withQuery(
          name,
          Array.from({ length: count }, (_, i) => String(i)),
        ),
        what: `query ${name} repeated ${count} times`,
      };
    }

    case 'hostile-id': {
      const value = random.pick(hostileIds);
      if (params.length) {
        const name = random.pick(params);
        return { wire: toWire(base, { [name]: value }), what: `path ${name} = ${value.slice(0, 60)}` };
      }
      const q = field(queries);
      const name = q?.name ?? 'id';
      return {
        wire: withQuery(name, [value.replace(/\//g, '%2F')], true),
        what: `query ${name} = ${value.slice(0, 60)}`,
      };
    }

    case 'form': {
      const content = operation.requestBody?.content ?? {};
      const schema = resolve(
        content['multipart/form-data']?.schema ?? content['application/x-www-form-urlencoded']?.schema,
      );
      const names = Object.keys(schema.properties ?? {});
      const name = names.length ? random.pick(names) : 'field';
      const value = random.pick([
        'a\u0000b',
        'x'.repeat(100_000),
        '\u00ff\u00fe',
        '2147483648',
        '1e309',
        '../../etc/passwd',
        '',
      ]);
      if ('multipart/form-data' in content) {
        const b = 'fuzzb';
        const part = (field: string, text: string, extra = '') =>
          `--${b}\r\nContent-Disposition: form-data; name="${field}"${extra}\r\n\r\n${text}\r\n`;
        const [label, type, body] = random.pick<[string, string, string]>([
          [
            `field ${name} = ${JSON.stringify(value.slice(0, 20))}`,
            `multipart/form-data; boundary=${b}`,
            `${part(name, value)}--${b}--\r\n`,
          ],
          [`${name} twice`, `multipart/form-data; boundary=${b}`, `${part(name, 'a')}${part(name, 'b')}--${b}--\r\n`],
          [
            '2,000 parts',
            `multipart/form-data; boundary=${b}`,
            `${Array.from({ length: 2000 }, (_, i) => part(`f${i}`, 'x')).join('')}--${b}--\r\n`,
          ],
          [
            'a field name of 10,000 characters',
            `multipart/form-data; boundary=${b}`,
            `${part('n'.repeat(10_000), 'x')}--${b}--\r\n`,
          ],
          [
            'a traversal file name',
            `multipart/form-data; boundary=${b}`,
            `${part('file', 'GIF89a', '; filename="../../../etc/passwd"')}--${b}--\r\n`,
          ],
          [
            'a file name in raw latin1 bytes',
            `multipart/form-data; boundary=${b}`,
            `${part('file', 'abc', '; filename="\u00ff\u00fe.png"')}--${b}--\r\n`,
          ],
          ['no closing boundary', `multipart/form-data; boundary=${b}`, part('file', 'abc', '; filename="a.png"')],
          ['an empty boundary', 'multipart/form-data; boundary=', `--\r\n\r\n`],
          [
            'a boundary of 200 characters',
            `multipart/form-data; boundary=${'b'.repeat(200)}`,
            `--${'b'.repeat(200)}--\r\n`,
          ],
          [
            'two files',
            `multipart/form-data; boundary=${b}`,
            `${part('file', 'a', '; filename="a.png"')}${part('file', 'b', '; filename="b.png"')}--${b}--\r\n`,
          ],
        ]);
        return {
          wire: toWire({ ...base, raw: { bytes: Buffer.from(body, 'latin1'), type } }),
          what: `multipart: ${label}`,
        };
      }
      if ('application/x-www-form-urlencoded' in content) {
        const [label, body] = random.pick<[string, string]>([
          [`${name} = ${JSON.stringify(value.slice(0, 20))}`, `${name}=${encode(value)}`],
          [`${name} twice`, `${name}=a&${name}=b`],
          ['invalid percent-encoding', `${name}=%ZZ%`],
          ['raw bytes', `${name}=%FF%FE`],
          ['2,000 parameters', Array.from({ length: 2000 }, (_, i) => `p${i}=1`).join('&')],
          ['bracket keys', `${name}[a][b]=1&__proto__[x]=1`],
        ]);
        return {
          wire: toWire({
            ...base,
            raw: { bytes: Buffer.from(body, 'latin1'), type: 'application/x-www-form-urlencoded' },
          }),
          what: `form: ${label}`,
        };
      }
      return mutate('content-type', base, operation, resolve, random);
    }

    case 'date': {
      const value = random.pick(hostileDates);
      const isDate = (f: Field) =>
        ['date-time', 'date'].includes(f.schema.format) ||
        /(_at|_from|_to|_for|since|until|date|from|to)$/.test(f.name);
      const bodyDates = fields.filter(isDate);
      const queryDates = queries.filter(isDate);
      if (takesJson && bodyDates.length && (queryDates.length === 0 || random.chance(0.5))) {
        const f = random.pick(bodyDates);
        return {
          wire: withBody(json(bodyWith(base, f.name, JSON.stringify(value)))),
          what: `body.${f.name} = ${value}`,
        };
      }
      if (queryDates.length) {
        const q = random.pick(queryDates);
        return { wire: withQuery(q.name, [value]), what: `query ${q.name} = ${value}` };
      }
      return mutate('huge-number', base, operation, resolve, random);
    }

    case 'cursor': {
      // A cursor is opaque, but its shape is easy to guess: the last row's sort value and id, as base64url JSON.
      const cursorParam = queries.find((q) => q.name === 'cursor');
      if (!cursorParam) return mutate('wrong-type', base, operation, resolve, random);
      const value = random.pick<unknown>(hostileCursorValues);
      const id = random.pick(['00000000-0000-0000-0000-000000000000', 'x', 5]);
      // Two shapes: a list's [value, id], and search's [clock, rank, kind, id, query].
      const shape = random.chance(0.7)
        ? [value, id]
        : [
            random.pick([value, '2026-01-01T00:00:00Z']),
            random.pick([value, 0.5, -1e308]),
            random.pick(['post', 'media', value]),
            random.pick([id, '00000000-0000-0000-0000-000000000000']),
            random.pick([value, 'fuzz', 'a\u0000b', '\ud800']),
          ];
      const cursor = random.chance(0.9)
        ? Buffer.from(JSON.stringify(shape)).toString('base64url')
        : random.pick(['%00', '!!!', '%FF', 'W10', 'bnVsbA', 'e30']);
      const sort = queries.find((q) => q.name === 'sort');
      const values: [string, string][] = [['cursor', cursor]];
      if (sort?.schema.enum) values.push(['sort', random.pick(sort.schema.enum as string[])]);
      const kept = base.query.filter(([key]) => !values.some(([name]) => name === key));
      const query = [...kept, ...values].map(([k, v]) => `${encode(k)}=${v.includes('%') ? v : encode(v)}`).join('&');
      return {
        wire: toWire(base, {}, query),
        what: `cursor ${JSON.stringify(shape).slice(0, 200)}${values[1] ? ` sort=${values[1][1]}` : ''}`,
      };
    }

    case 'header': {
      const headers = headerFields(operation, resolve);
      const name = headers.length ? random.pick(headers).name : random.pick(['if-match', 'idempotency-key', 'prefer']);
      const value = random.pick(hostileHeaders);
      const wire = toWire(base);
      wire.headers[name.toLowerCase()] = value;
      return { wire, what: `header ${name}: ${JSON.stringify(value.slice(0, 60))}` };
    }

    case 'content-type': {
      const body = base.raw?.bytes ?? Buffer.from(JSON.stringify(base.body ?? {}));
      const [type, bytes, label] = random.pick<[string, Buffer, string]>([
        ['text/plain', body, 'the body as text/plain'],
        ['application/xml', Buffer.from('<a>1</a>'), 'an XML body'],
        ['application/x-www-form-urlencoded', Buffer.from('a=1&a=2&b[c]=3'), 'a form body'],
        ['multipart/form-data', Buffer.from('--x\r\n\r\n'), 'multipart without a boundary'],
        [
          'multipart/form-data; boundary=x',
          Buffer.from('--x\r\nContent-Disposition: form-data; name="file"\r\n\r\nabc'),
          'a truncated multipart body',
        ],
        ['application/json', Buffer.from('{"a":'), 'truncated JSON'],
        ['application/json', Buffer.from('not json at all'), 'a JSON type with text'],
        ['application/json; charset=utf-16', body, 'JSON in charset utf-16'],
        ['application/json; charset=latin1', body, 'JSON in charset latin1'],
        ['application/octet-stream', Buffer.from([0, 1, 2, 255]), 'octet-stream bytes'],
        ['', body, 'no content type'],
        ['application/json', Buffer.from(''), 'an empty JSON body'],
        ['application/merge-patch+json', body, 'merge-patch JSON'],
        ['application/json', Buffer.from('\ufeff{}'), 'JSON behind a byte-order mark'],
        ['application/json', Buffer.from('"just a string"'), 'a JSON string'],
      ]);
      const wire = toWire({ ...base, raw: { bytes, type } });
      if (!type) delete wire.headers['content-type'];
      return { wire, what: label };
    }
  }
}
