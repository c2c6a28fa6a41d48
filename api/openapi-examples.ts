// Examples for the OpenAPI document: every request body, and the main answers
// of the core resources (tenants, sites, users, content, media, jobs,
// credits), so a reader sees a request and its answer without composing one.
// Hand-written where a reader learns from them (./openapi-written-examples.ts);
// the rest are built from the schema itself, deterministically: the document
// is the same on every start. test/api/openapi-examples.test.ts checks each
// against its own schema, as a client's validator would.
import { writtenExamples } from './openapi-written-examples.ts';

type Schema = Record<string, any>;
type Operation = {
  requestBody?: { content: Record<string, { schema?: Schema; example?: unknown }> };
  responses: Record<string, { content?: Record<string, { schema?: Schema; example?: unknown }> } | { $ref: string }>;
};

/** The answers that carry an example: `METHOD path` and status; the create and read of each core resource. */
export const exampleAnswers: [key: string, status: string][] = [
  ['POST /auth/login', '200'],
  ['POST /auth/token', '200'],
  ['POST /admin/tenants/', '201'],
  ['GET /admin/tenants/{tenant_id}', '200'],
  ['POST /sites/', '201'],
  ['GET /sites/{site_identifier}', '200'],
  ['POST /users/', '201'],
  ['GET /users/{user_id}', '200'],
  ['POST /{site_identifier}/contenttypes/', '201'],
  ['GET /{site_identifier}/contenttypes/{type_id}', '200'],
  ['POST /{site_identifier}/elements/', '201'],
  ['GET /{site_identifier}/elements/{element_id}', '200'],
  ['POST /{site_identifier}/pages/', '201'],
  ['GET /{site_identifier}/pages/{page_id}', '200'],
  ['POST /{site_identifier}/posts/', '201'],
  ['GET /{site_identifier}/posts/{post_id}', '200'],
  ['POST /{site_identifier}/media/', '201'],
  ['GET /{site_identifier}/media/{media_id}', '200'],
  ['POST /{site_identifier}/media/tts', '202'],
  ['POST /{site_identifier}/media/generate', '202'],
  ['GET /{site_identifier}/jobs/{job_id}', '200'],
  ['POST /{site_identifier}/transactions/credits/add', '201'],
  ['POST /{site_identifier}/transactions/credits/allocate-from-tenant', '201'],
  ['GET /{site_identifier}/transactions/credits/balance', '200'],
  ['POST /admin/global-cost-settings/tenant-credits/allocate', '201'],
];

/** The document with its examples added (in place): each request body's media types, and the answers above. */
export function withExamples<D extends { paths?: object; components?: object }>(document: D): D {
  const schemas: Record<string, Schema> = (document.components as { schemas?: Record<string, Schema> }).schemas ?? {};
  const paths = (document.paths ?? {}) as Record<string, Record<string, Operation>>;
  for (const [path, item] of Object.entries(paths))
    for (const [method, operation] of Object.entries(item)) {
      const key = `${method.toUpperCase()} ${path}`;
      const written = writtenExamples[key];
      for (const media of Object.values(operation.requestBody?.content ?? {})) {
        if (media.example !== undefined || !media.schema) continue;
        media.example = written?.request ?? exampleOf(media.schema, schemas);
      }
      for (const [answerKey, status] of exampleAnswers) {
        if (answerKey !== key) continue;
        const response = operation.responses[status];
        if (!response || '$ref' in response) continue;
        for (const media of Object.values(response.content ?? {}))
          if (media.schema && media.example === undefined)
            media.example = written?.responses?.[status] ?? exampleOf(media.schema, schemas);
      }
    }
  return document;
}

// Words a reader recognises, by the name of the field they fill (the first that fits its schema).
const words: [RegExp, string][] = [
  [/^(username|email|.*_email)$/, 'ada@example.com'],
  [/password/, 'correct horse battery staple'],
  [/^(api_id|field_id|key_name|id)$/, 'recipe'],
  [/^site_identifier$/, 'harbour-bakery'],
  [/slug$/, 'harbour-bakery'],
  [/^target_locale$/, 'fr'],
  [/^(locale|language|default_locale|.*_locale)$/, 'en'],
  [/^(full_name|display_name)$/, 'Ada Lovelace'],
  [/^(file_name|filename)$/, 'sourdough.jpg'],
  [/^(name|.*_name)$/, 'Harbour bakery'],
  [/^(label)$/, 'Recipe'],
  [/title/, 'Hello from the harbour'],
  [/^(prompt|instructions?|input)$/, 'A lighthouse at dusk, in watercolour'],
  [/^(text|narration)$/, 'Welcome to the harbour bakery.'],
  [/^(body|content|markdown)$/, 'Fresh bread every morning, and a new cake each Friday.'],
  [/^(description|excerpt|summary|business)$/, 'A harbour bakery: bread every morning, cakes on Fridays'],
  [/^(alt|caption)$/, 'A sourdough loaf on a floured board'],
  [/^(reason|note)$/, 'Monthly top-up'],
  [/^(message|comment|subject)$/, 'Do you bake gluten-free bread?'],
  [/^(query|q|search)$/, 'lighthouse'],
  [/^(tag|categor(y|ie))$/, 'news'],
  [/currency/, 'eur'],
  [/^(domain|hostname|host)$/, 'bakery.example.com'],
  [/^mime_type$/, 'image/jpeg'],
  [/^path$/, '/about'],
  [/colou?r/, '#c8a165'],
  [/^stage$/, 'Waiting for a worker'],
  [/^provider$/, 'openai'],
  [/^access_token$/, 'eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiJzYSJ9.c2lnbmF0dXJl'],
  [/^scope$/, 'sites:read jobs:write media:write'],
  [/^(code|state|token)$/, 'Zp4kQ9vX2mL7'],
  [/^kind$/, 'speech'],
  [/^(voice|model|template|type|role|area)$/, 'default'],
  [/^webhook$/, 'https://bakery.example.com/hooks/jobs'],
  [/(url|uri|link)$/, 'https://bakery.example.com/blog/spring-menu'],
];

// Numbers by the name of their field, kept within the schema's bounds.
const numbers: [RegExp, number][] = [
  [/^(width|height)$/, 1024],
  [/size_bytes$/, 204800],
  [/seconds/, 12],
  [/^(amount|balance|available|credits|monthly_.*|.*_limit|.*_this_month)$/, 500],
  [/^(position|reserved|progress|attempts|priority|credits_charged)$/, 0],
  [/^(expires_in)$/, 900],
];

// Strings that match the patterns the schemas use, tried in turn when the field's word does not.
const candidates = [
  'en',
  'hello-world',
  'hello_world',
  'example.com',
  'eur',
  'price_1PqRsT',
  '12',
  '1024x1024',
  'default',
];

const uuidOf = (seed: string) => {
  // FNV-1a, spread over 32 hex digits: the same field gets the same id on every build.
  let hex = '';
  let hash = 0x811c9dc5;
  for (let round = 0; hex.length < 32; round++) {
    for (const char of `${seed}:${round}`) hash = Math.imul(hash ^ char.charCodeAt(0), 0x01000193) >>> 0;
    hex += hash.toString(16).padStart(8, '0');
  }
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-4${hex.slice(13, 16)}-a${hex.slice(17, 20)}-${hex.slice(20, 32)}`;
};

const byFormat: Record<string, (name: string) => string> = {
  uuid: uuidOf,
  email: () => 'ada@example.com',
  uri: () => 'https://bakery.example.com/blog/spring-menu',
  'date-time': () => '2026-03-01T09:30:00.000Z',
  date: () => '2026-03-01',
  binary: () => '(the file)',
  hostname: () => 'example.com',
};

function stringOf(schema: Schema, name: string): string {
  const fits = (value: string) =>
    value.length >= (schema.minLength ?? 0) &&
    value.length <= (schema.maxLength ?? Infinity) &&
    (!schema.pattern || new RegExp(schema.pattern, 'u').test(value));
  const word = words.find(([field, value]) => field.test(name) && fits(value))?.[1];
  const format = byFormat[schema.format]?.(name);
  // A URL's field may have a word of its own (a webhook's); other formats are the format's.
  if (format) return schema.format === 'uri' && word?.startsWith('https://') ? word : format;
  // Without a word or pattern, the field's own name says what goes in it better than a stock string.
  const plain = schema.pattern ? undefined : name.replace(/_/g, ' ').replace(/^./, (first) => first.toUpperCase());
  const found = [word, plain, ...candidates].find((value) => value !== undefined && value !== '' && fits(value));
  if (found) return found;
  return (word ?? 'example').slice(0, schema.maxLength ?? Infinity).padEnd(schema.minLength ?? 0, 'x');
}

function numberOf(schema: Schema, name: string): number {
  const low = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : undefined);
  const high = schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : undefined);
  let value = numbers.find(([field]) => field.test(name))?.[1] ?? 1;
  value = Math.min(Math.max(value, low ?? -Infinity), high ?? Infinity);
  if (schema.multipleOf) value = Math.ceil(value / schema.multipleOf) * schema.multipleOf;
  return schema.type === 'integer' ? Math.round(value) : value;
}

/** A value the schema takes, built from it: required fields only, the first choice of each, plausible words. */
export function exampleOf(schema: Schema, schemas: Record<string, Schema>, name = '', depth = 0): unknown {
  if (schema.$ref) {
    const target = schemas[String(schema.$ref).replace('#/components/schemas/', '')];
    return target ? exampleOf(target, schemas, name, depth + 1) : null;
  }
  if (schema.example !== undefined) return schema.example;
  if (Array.isArray(schema.examples) && schema.examples.length) return schema.examples[0];
  if ('const' in schema) return schema.const;
  if (schema.default !== undefined) return schema.default;
  if (Array.isArray(schema.enum)) return schema.enum.find((value: unknown) => value !== null) ?? schema.enum[0];
  // What may be null is shown null: an answer's fields not set yet (a draft's published_at), as they mostly are.
  if ([schema.type].flat().includes('null')) return null;
  const choice = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(choice)) {
    if (choice.some((option: Schema) => option.type === 'null')) return null;
    const first = choice.find((option: Schema) => option.type !== 'null') ?? choice[0];
    return exampleOf(merged({ ...schema, anyOf: undefined, oneOf: undefined }, first, schemas), schemas, name, depth);
  }
  if (Array.isArray(schema.allOf))
    return exampleOf(
      // A rule between fields (if … then) is kept to the fields the example leaves out.
      schema.allOf
        .filter((part: Schema) => !('if' in part))
        .reduce((all: Schema, part: Schema) => merged(all, part, schemas), { ...schema, allOf: undefined }),
      schemas,
      name,
      depth,
    );
  const type = [schema.type ?? (schema.properties ? 'object' : 'string')].flat().find((one) => one !== 'null');
  switch (type) {
    case 'string':
      return stringOf(schema, name);
    case 'integer':
    case 'number':
      return numberOf(schema, name);
    case 'boolean':
      return true;
    case 'array': {
      const count = Math.max(schema.minItems ?? 0, depth < 4 && schema.maxItems !== 0 ? 1 : 0);
      const item = schema.items ?? {};
      return Array.from({ length: count }, (_, index) =>
        exampleOf(item, schemas, index === 0 ? singular(name) : `${singular(name)}${index}`, depth + 1),
      );
    }
    case 'object':
      return objectOf(schema, schemas, depth);
    default:
      return null;
  }
}

/**
 * A schema with one of its parts (a choice, or a piece of allOf) laid over
 * it: a part that only requires a field, or narrows one, keeps the schema's
 * own description of that field.
 */
function merged(schema: Schema, part: Schema, schemas: Record<string, Schema>): Schema {
  const resolved = part.$ref ? (schemas[String(part.$ref).split('/').pop()!] ?? {}) : part;
  const properties: Record<string, Schema> = { ...schema.properties };
  for (const [field, narrowed] of Object.entries<Schema>(resolved.properties ?? {}))
    properties[field] = { ...properties[field], ...narrowed };
  return {
    ...schema,
    ...resolved,
    ...(schema.properties || resolved.properties ? { properties } : {}),
    required: [...new Set([...(schema.required ?? []), ...(resolved.required ?? [])])],
  };
}

const singular = (name: string) => name.replace(/(ies)$/, 'y').replace(/s$/, '');

function objectOf(schema: Schema, schemas: Record<string, Schema>, depth: number): Record<string, unknown> {
  const properties: Record<string, Schema> = schema.properties ?? {};
  const names = new Set<string>(schema.required ?? []);
  // A change must change something (minProperties): its first field.
  for (const field of Object.keys(properties)) {
    if (names.size >= (schema.minProperties ?? 0)) break;
    names.add(field);
  }
  return Object.fromEntries(
    [...names].map((field) => [field, exampleOf(properties[field] ?? {}, schemas, field, depth + 1)]),
  );
}
