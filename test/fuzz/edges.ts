// The edges of valid input, drawn from the OpenAPI document: for each value a
// request carries (a query or path parameter, a body field at any depth), the
// values at and just inside each bound its schema documents — string lengths
// at minLength and maxLength, numbers at minimum and maximum and of tiny
// magnitude (1e-50, 5e-324, -0), integers at their bounds (±(2^53−1) where the
// document sets none), date-times at offsets from −23:59 to +23:59 and in the
// years 0001 and 9999, the first and last value of an enum, null where it is
// nullable, and {} where every field of an object is optional. The hostile
// catalogue (./engine.ts) breaks requests; this one keeps them valid, so a 5xx
// here is a crash on input the document promises to take.
import { sample, toWire, type Base, type Random, type Wire } from './engine.ts';

type Schema = Record<string, any>;
type Resolve = (schema?: Schema) => Schema;

/** One value a schema allows, and a line saying why it is an edge. */
export type EdgeValue = { value: unknown; label: string };

/** Where a value sits in a request: a parameter by name, or a body field by its path (empty: the whole body). */
export type Place = { in: 'query' | 'path' | 'body'; path: string[]; schema: Schema };

/** An instant at the offsets RFC 3339 allows, in the years it allows, some of them past the years 0001–9999 in UTC. */
export const edgeDateTimes = [
  '2026-06-15T12:00:00-23:59',
  '2026-06-15T12:00:00+23:59',
  '2026-06-15T12:00:00-16:00',
  '2026-06-15T12:00:00+16:00',
  '2026-06-15T12:00:00-15:59',
  '2026-06-15T12:00:00.123456789+19:30',
  '2026-06-15T12:00:00-00:00',
  '0001-01-01T00:00:00Z',
  '0001-01-01T00:00:00-23:59',
  '0001-01-01T00:00:00+23:59',
  '9999-12-31T23:59:59.999999Z',
  '9999-12-31T23:59:59+23:59',
  '9999-12-31T23:59:59-23:59',
  '2099-12-31T23:59:59-23:59',
];

export const edgeDates = ['0001-01-01', '9999-12-31', '2024-02-29', '2099-12-31'];

const nested = (s: Schema) => s.oneOf ?? s.anyOf ?? s.allOf ?? [];

const typeOf = (s: Schema): string | undefined =>
  Array.isArray(s.type) ? s.type.find((t: string) => t !== 'null') : s.type;

const allowsNull = (s: Schema, resolve: Resolve) =>
  (Array.isArray(s.type) && s.type.includes('null')) ||
  s.type === 'null' ||
  s.nullable === true ||
  nested(s).some((variant: Schema) => resolve(variant).type === 'null');

/** A string of `length` UTF-16 units: letters, or (odd ones) an astral character counted as two. */
function ofLength(length: number, astral: boolean): string {
  if (!astral || length < 2) return 'a'.repeat(length);
  return '😀'.repeat(Math.floor(length / 2)) + 'a'.repeat(length % 2);
}

function stringEdges(s: Schema): EdgeValue[] {
  switch (s.format) {
    case 'date-time':
      return edgeDateTimes.map((value) => ({ value, label: `date-time ${value}` }));
    case 'date':
      return edgeDates.map((value) => ({ value, label: `date ${value}` }));
    case 'uuid':
      return [
        { value: '00000000-0000-0000-0000-000000000000', label: 'the nil uuid' },
        { value: 'ffffffff-ffff-ffff-ffff-ffffffffffff', label: 'the max uuid' },
        { value: 'FFFFFFFF-FFFF-4FFF-BFFF-FFFFFFFFFFFF', label: 'an upper-case uuid' },
      ];
    case 'email': {
      const length = s.maxLength ?? 254;
      const domain = `${'d'.repeat(Math.max(1, Math.min(63, length - 70)))}.example`;
      const local = 'l'.repeat(Math.max(1, Math.min(64, length - domain.length - 1)));
      return [
        { value: 'a@b.co', label: 'a short e-mail address' },
        { value: `${local}@${domain}`, label: `an e-mail address of ${local.length + domain.length + 1} characters` },
      ];
    }
    case 'uri':
    case 'url': {
      const length = Math.min(s.maxLength ?? 2048, 8192);
      const head = 'https://example.com/';
      return [{ value: head + 'p'.repeat(Math.max(0, length - head.length)), label: `a URL of ${length} characters` }];
    }
  }
  // A pattern decides what the characters must be: lengths alone would only break it.
  if (s.pattern) return patternEdges(s);
  const edges: EdgeValue[] = [];
  const min = s.minLength ?? 0;
  const lengths = new Set([min, min + 1]);
  if (s.maxLength !== undefined) lengths.add(Math.max(min, s.maxLength - 1)).add(s.maxLength);
  for (const length of lengths) {
    if (s.maxLength !== undefined && length > s.maxLength) continue;
    if (length > 1_000_000) continue;
    edges.push({ value: ofLength(length, false), label: `a string of ${length} characters` });
    if (length >= 2) edges.push({ value: ofLength(length, true), label: `${length} UTF-16 units of emoji` });
  }
  if (min === 0) edges.push({ value: ' ', label: 'a single space' });
  return edges;
}

type Atom = { low: string; high: string; min: number; max: number };

/** The characters a class or an escape stands for, as its lowest and highest; undefined for what is not simple. */
function charRange(text: string): { low: string; high: string } | undefined {
  const escapes: Record<string, [string, string]> = { d: ['0', '9'], w: ['0', 'z'] };
  if (text.startsWith('\\')) {
    const named = escapes[text[1]!];
    return named ? { low: named[0], high: named[1] } : { low: text[1]!, high: text[1]! };
  }
  if (!text.startsWith('[')) return { low: text, high: text };
  const inner = text.slice(1, -1);
  if (inner.startsWith('^')) return undefined;
  const singles = [...inner.replace(/\\d/g, '0-9').replace(/\\w/g, 'A-Za-z0-9_').replace(/\\(.)/g, '$1')];
  return { low: singles[0]!, high: singles.at(-1)! };
}

/**
 * Strings at the length bounds of a simple pattern — anchored classes and
 * characters with quantifiers, such as ^[a-z][a-z0-9_]{0,62}$ — in its lowest
 * and its highest characters; none for patterns with groups or alternatives.
 */
function patternEdges(s: Schema): EdgeValue[] {
  const match = /^\^(.*)\$$/.exec(s.pattern);
  if (!match) return [];
  const atoms: Atom[] = [];
  const token = /(\[(?:\\.|[^\]])+\]|\\.|[A-Za-z0-9_@.:/-])(\{(\d+)(,(\d*))?\}|[+*?])?/y;
  const source = match[1]!;
  while (token.lastIndex < source.length) {
    const at = token.lastIndex;
    const found = token.exec(source);
    if (!found || found.index !== at) return [];
    const range = charRange(found[1]!);
    if (!range) return [];
    const [, , quantifier, least, comma, most] = found;
    const min = quantifier === '+' ? 1 : quantifier === '*' || quantifier === '?' ? 0 : least ? Number(least) : 1;
    const max =
      quantifier === '+' || quantifier === '*'
        ? Infinity
        : quantifier === '?'
          ? 1
          : comma && !most
            ? Infinity
            : most
              ? Number(most)
              : min;
    atoms.push({ ...range, min, max });
  }
  const cap = Math.min(s.maxLength ?? 1000, 100_000);
  const build = (longest: boolean, char: 'low' | 'high') => {
    let room = cap - atoms.reduce((sum, atom) => sum + atom.min, 0);
    return atoms
      .map((atom) => {
        const extra = longest ? Math.max(0, Math.min(atom.max - atom.min, room)) : 0;
        room -= extra;
        return atom[char].repeat(atom.min + extra);
      })
      .join('');
  };
  const pattern = new RegExp(s.pattern, 'u');
  const values = new Set([build(false, 'low'), build(false, 'high'), build(true, 'low'), build(true, 'high')]);
  return [...values]
    .filter((value) => pattern.test(value) && value.length >= (s.minLength ?? 0) && value.length <= cap)
    .map((value) => ({ value, label: `${value.length} characters of /${s.pattern}/ (${value.slice(0, 12)}…)` }));
}

function numberEdges(s: Schema, integer: boolean): EdgeValue[] {
  const safe = Number.MAX_SAFE_INTEGER;
  const lowest = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum : undefined);
  const highest = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum : undefined);
  const values = new Map<number, string>();
  const add = (value: number, label: string) => {
    if (!Number.isFinite(value) || values.has(value)) return;
    if (s.minimum !== undefined && value < s.minimum) return;
    if (s.maximum !== undefined && value > s.maximum) return;
    if (s.exclusiveMinimum !== undefined && value <= s.exclusiveMinimum) return;
    if (s.exclusiveMaximum !== undefined && value >= s.exclusiveMaximum) return;
    if (integer && !Number.isInteger(value)) return;
    values.set(value, label);
  };
  const step = integer ? 1 : Number.MIN_VALUE;
  if (lowest !== undefined) {
    add(lowest, `the minimum ${lowest}`);
    add(integer ? lowest + 1 : lowest + Math.max(Math.abs(lowest) * 1e-15, step), `just above the minimum ${lowest}`);
  } else add(integer ? -safe : -Number.MAX_VALUE, 'the most negative number JSON carries exactly');
  if (highest !== undefined) {
    add(highest, `the maximum ${highest}`);
    add(
      integer ? highest - 1 : highest - Math.max(Math.abs(highest) * 1e-15, step),
      `just below the maximum ${highest}`,
    );
  } else add(integer ? safe : Number.MAX_VALUE, 'the largest number JSON carries exactly');
  if (integer) {
    add(0, 'zero');
    add(2_147_483_647, 'the largest int4');
    add(2_147_483_648, 'one past int4');
    add(-2_147_483_648, 'the smallest int4');
  } else {
    add(1e-50, 'a tiny magnitude');
    add(-1e-50, 'a tiny negative magnitude');
    add(5e-324, 'the smallest positive double');
    add(0.1 + 0.2, 'a binary fraction');
    add(1e-7, 'a magnitude past float4 display precision');
  }
  const edges = [...values].map(([value, label]) => ({ value, label: `${label} (${value})` }));
  // -0 is a number apart: JSON carries it, and it equals 0.
  if ((s.minimum === undefined || s.minimum <= 0) && (s.maximum === undefined || s.maximum >= 0)) {
    if (s.exclusiveMinimum === undefined || s.exclusiveMinimum < 0) edges.push({ value: -0, label: 'negative zero' });
  }
  return edges;
}

/** The edge values of one schema, for a field that holds it. */
export function edgeValues(schema: Schema | undefined, resolve: Resolve, random: Random, depth = 0): EdgeValue[] {
  const s = resolve(schema);
  const edges: EdgeValue[] = [];
  if (allowsNull(s, resolve)) edges.push({ value: null, label: 'null' });
  if ('const' in s) return [...edges, { value: s.const, label: 'its constant' }];
  if (s.enum?.length) {
    const ends = [...new Set([s.enum[0], s.enum.at(-1)])].filter((value) => value !== null);
    return [...edges, ...ends.map((value) => ({ value, label: `the enum value ${JSON.stringify(value)}` }))];
  }
  for (const variant of nested(s)) {
    const part = resolve(variant);
    if (part.type !== 'null') edges.push(...edgeValues(part, resolve, random, depth + 1));
  }
  switch (typeOf(s)) {
    case 'string':
      return [...edges, ...stringEdges(s)];
    case 'integer':
      return [...edges, ...numberEdges(s, true)];
    case 'number':
      return [...edges, ...numberEdges(s, false)];
    case 'boolean':
      return [...edges, { value: true, label: 'true' }, { value: false, label: 'false' }];
    case 'array': {
      const min = s.minItems ?? 0;
      const max = s.maxItems;
      const item = () => sample(s.items, resolve, random, depth + 1);
      edges.push({ value: Array.from({ length: min }, item), label: `${min} items, the fewest` });
      if (max !== undefined && max !== min && max <= 1000)
        edges.push({ value: Array.from({ length: max }, item), label: `${max} items, the most` });
      return edges;
    }
    case 'object':
      if (s.properties && (s.required ?? []).length === 0) edges.push({ value: {}, label: 'an empty object' });
      return edges;
  }
  return edges;
}

/** The object schema's properties, its variants' too, with the schema of each. */
function propertiesOf(s: Schema, resolve: Resolve): [string, Schema][] {
  const parts = [s, ...nested(s).map(resolve)];
  return parts.flatMap((part) =>
    Object.entries<Schema>(part.properties ?? {}).map(([name, p]): [string, Schema] => [name, resolve(p)]),
  );
}

/** Every place in the operation's request a value sits, body fields down to a few levels. */
export function placesOf(operation: Record<string, any>, resolve: Resolve): Place[] {
  const places: Place[] = [];
  for (const parameter of (operation.parameters ?? []).map(resolve)) {
    // A cursor is opaque: no value of its schema is one but what the server made (the hostile catalogue forges them).
    if (parameter.name === 'cursor') continue;
    if (parameter.in === 'query' || parameter.in === 'path') {
      places.push({ in: parameter.in, path: [parameter.name], schema: resolve(parameter.schema) });
    }
  }
  const body = operation.requestBody?.content?.['application/json']?.schema;
  if (!body) return places;
  const walk = (schema: Schema, path: string[]) => {
    places.push({ in: 'body', path, schema });
    if (path.length >= 4) return;
    if (typeOf(schema) === 'array' && schema.items) walk(resolve(schema.items), [...path, '0']);
    for (const [name, property] of propertiesOf(schema, resolve)) walk(property, [...path, name]);
  };
  walk(resolve(body), []);
  return places;
}

/** The body with the value at `path` set, its missing parents drawn from their schemas. */
function bodyWith(base: unknown, path: string[], value: unknown, bodySchema: Schema, resolve: Resolve, random: Random) {
  if (path.length === 0) return value;
  const root: any = base && typeof base === 'object' ? structuredClone(base) : {};
  let node = root;
  let schema = resolve(bodySchema);
  for (const [index, key] of path.entries()) {
    const next =
      key === '0' && typeOf(schema) === 'array'
        ? resolve(schema.items)
        : (propertiesOf(schema, resolve).find(([name]) => name === key)?.[1] ?? {});
    if (index === path.length - 1) {
      node[key] = value;
      break;
    }
    if (node[key] === null || typeof node[key] !== 'object') {
      const drawn = sample(next, resolve, random);
      node[key] = drawn && typeof drawn === 'object' ? drawn : typeOf(next) === 'array' ? [] : {};
    }
    node = node[key];
    schema = next;
  }
  return root;
}

/** A parameter's value as a query or path carries it. */
const asText = (value: unknown) =>
  Object.is(value, -0) ? '-0' : typeof value === 'string' ? value : JSON.stringify(value);

/**
 * One request at an edge: a place of the operation and an edge value of its
 * schema, drawn from `random`, set into the base request. Undefined when the
 * operation has no place with an edge.
 */
export function edgeCase(
  base: Base,
  operation: Record<string, any>,
  resolve: Resolve,
  random: Random,
): { wire: Wire; what: string; place: Place } | undefined {
  // A raw body (a form, a file, a signed webhook) is not JSON to set a field in.
  const places = placesOf(operation, resolve).filter((place) => place.in !== 'body' || !base.raw);
  const withEdges = places
    .map((place) => {
      const edges = edgeValues(place.schema, resolve, random);
      // A query or path parameter carries text: null, objects and arrays have no edge there.
      return { place, edges: place.in === 'body' ? edges : edges.filter((edge) => typeof edge.value !== 'object') };
    })
    .filter((entry) => entry.edges.length > 0);
  if (withEdges.length === 0) return undefined;
  // A path parameter at an edge finds nothing (a 404) but once in a while: most cases go to the query and body.
  const inside = withEdges.filter((entry) => entry.place.in !== 'path');
  const { place, edges } = random.pick(inside.length && random.chance(0.85) ? inside : withEdges);
  const edge = random.pick(edges);
  const where = `${place.in} ${place.path.join('.') || '(whole body)'}`;
  const what = `${where} = ${edge.label}`;
  if (place.in === 'query') {
    const name = place.path[0]!;
    const query: [string, string][] = [...base.query.filter(([key]) => key !== name), [name, asText(edge.value)]];
    return { wire: toWire({ ...base, query }), what, place };
  }
  if (place.in === 'path') {
    return { wire: toWire({ ...base, params: { ...base.params, [place.path[0]!]: asText(edge.value) } }), what, place };
  }
  const bodySchema = operation.requestBody.content['application/json'].schema;
  const body = bodyWith(base.body, place.path, edge.value, bodySchema, resolve, random);
  // JSON.stringify writes -0 as 0: the wire carries it as written.
  const text = JSON.stringify(body, (_key, value) => (Object.is(value, -0) ? '__negative_zero__' : value)).replace(
    /"__negative_zero__"/g,
    '-0',
  );
  const wire = toWire({ ...base, raw: { bytes: Buffer.from(text), type: 'application/json' } });
  return { wire, what, place };
}
