// The fields of a content type: what each type of field is, which
// validations it takes, and the checks a schema must pass before it is saved
// (every problem reported at once, each with its path). What a field accepts
// as data is core/content/data.ts.
import safeRegex from 'safe-regex2';
import { z } from 'zod';

export const fieldTypes = [
  'text',
  'long_text',
  'rich_text',
  'integer',
  'number',
  'boolean',
  'date',
  'datetime',
  'enum',
  'slug',
  'email',
  'url',
  'color',
  'json',
  'media',
  'reference',
  'list',
  'object',
] as const;

export type FieldType = (typeof fieldTypes)[number];

export const mediaKinds = ['image', 'video', 'audio', 'document'] as const;

/** Lists and objects nest at most this deep (a field at the top is depth 1). */
export const maxDepth = 4;
/** Fields of one type, counting nested ones. */
export const maxFields = 200;
/** `text` holds one line; longer prose is `long_text` or `rich_text`. */
export const textMaxLength = 255;

export const apiIdPattern = /^[a-z][a-z0-9_]{0,62}$/;
const snakeCase = z.string().regex(apiIdPattern, 'snake_case: a lower-case letter, then letters, digits or _');

export type Validations = {
  min_length?: number | undefined;
  max_length?: number | undefined;
  min?: number | string | undefined;
  max?: number | string | undefined;
  pattern?: string | undefined;
  allowed_values?: string[] | undefined;
  reference_types?: string[] | undefined;
  media_kinds?: (typeof mediaKinds)[number][] | undefined;
  min_items?: number | undefined;
  max_items?: number | undefined;
  message?: string | undefined;
};

/** What a list holds: a field without a name of its own. */
export type ItemDefinition = {
  type: FieldType;
  values?: string[] | undefined;
  fields?: Field[] | undefined;
  of?: ItemDefinition | undefined;
  validations?: Validations | undefined;
};

export type Field = ItemDefinition & {
  id: string;
  label: string;
  required: boolean;
  localized: boolean;
  unique: boolean;
  default?: unknown;
  help?: string | undefined;
};

const count = z.number().int().min(0).max(1_000_000);
const bound = z.union([z.number(), z.string().max(40)]);

export const validationsSchema = z
  .strictObject({
    min_length: count.optional(),
    max_length: count.optional(),
    min: bound.optional().describe('Least value: a number, or a date / date-time for those types'),
    max: bound.optional().describe('Greatest value: a number, or a date / date-time for those types'),
    pattern: z
      .string()
      .min(1)
      .max(500)
      .optional()
      .describe('A regular expression (JavaScript, u flag) the whole value must match; checked to be safe'),
    allowed_values: z.array(z.string().max(255)).min(1).max(500).optional(),
    reference_types: z.array(snakeCase).min(1).max(50).optional().describe('api_ids of the types a reference may be'),
    media_kinds: z.array(z.enum(mediaKinds)).min(1).optional(),
    min_items: count.optional(),
    max_items: count.optional(),
    message: z.string().min(1).max(300).optional().describe('Said instead of the default message when a rule fails'),
  })
  .meta({ id: 'FieldValidations' });

export const itemDefinitionSchema: z.ZodType<ItemDefinition> = z
  .strictObject({
    type: z.enum(fieldTypes),
    values: z.array(z.string().min(1).max(255)).min(1).max(500).optional().describe('The choices of an enum'),
    get fields() {
      return z.array(fieldSchema).max(maxFields).optional().describe('The fields of an object');
    },
    get of() {
      // Not described here: a description beside a recursive $ref makes the OpenAPI generator inline it forever.
      return itemDefinitionSchema.optional();
    },
    validations: validationsSchema.optional(),
  })
  .meta({
    id: 'ContentFieldItem',
    description: 'What a list holds: a field without a name of its own (`of` for a list of lists)',
  });

export const fieldSchema: z.ZodType<Field, unknown> = z
  .strictObject({
    id: snakeCase,
    label: z.string().trim().min(1).max(200),
    type: z.enum(fieldTypes),
    required: z.boolean().default(false),
    localized: z.boolean().default(false).describe('Translations hold their own value; others take the master’s'),
    unique: z.boolean().default(false).describe('No two elements of the type (in one locale) share the value'),
    default: z.unknown().optional().describe('The value a new element gets when it does not give one'),
    help: z.string().max(1000).optional(),
    values: z.array(z.string().min(1).max(255)).min(1).max(500).optional().describe('The choices of an enum'),
    get fields() {
      return z.array(fieldSchema).max(maxFields).optional().describe('The fields of an object');
    },
    get of() {
      // Not described here: a description beside a recursive $ref makes the OpenAPI generator inline it forever.
      return itemDefinitionSchema.optional();
    },
    validations: validationsSchema.optional(),
  })
  .meta({
    id: 'ContentField',
    description:
      'A field of a content type; `of` says what a list holds, `fields` what an object holds (nested at most 4 deep)',
  });

export type SchemaIssue = { path: string; message: string };

/** Which validations each type takes; `message` and `allowed_values` as listed. */
const allowed: Record<FieldType, (keyof Validations)[]> = {
  text: ['min_length', 'max_length', 'pattern', 'allowed_values'],
  long_text: ['min_length', 'max_length', 'pattern'],
  rich_text: ['min_length', 'max_length'],
  integer: ['min', 'max'],
  number: ['min', 'max'],
  boolean: [],
  date: ['min', 'max'],
  datetime: ['min', 'max'],
  enum: [],
  slug: ['min_length', 'max_length', 'pattern'],
  email: ['pattern', 'allowed_values'],
  url: ['pattern'],
  color: [],
  json: [],
  media: ['media_kinds'],
  reference: ['reference_types'],
  list: ['min_items', 'max_items'],
  object: [],
};

const uniqueable = new Set<FieldType>(['text', 'slug', 'email', 'url', 'integer', 'number', 'date', 'enum']);
const dateLike = /^\d{4}-\d{2}-\d{2}([T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?)?$/;

/** A pattern that compiles and whose matching time cannot explode (no nested quantifiers, star height ≤ 1). */
export function patternProblem(pattern: string): string | undefined {
  try {
    new RegExp(pattern, 'u');
  } catch (error) {
    return `is not a valid regular expression: ${(error as Error).message}`;
  }
  if (!safeRegex(pattern)) return 'could take exponential time on some inputs (nested quantifiers); simplify it';
  return undefined;
}

/**
 * The checks a zod shape cannot make: ids unique per level, validations that
 * fit the type, bounds in order, safe patterns, enum values and nesting as
 * the type needs, the depth cap, and a default the field itself accepts.
 * `acceptsDefault` is the data check, passed in so that this module does not
 * depend on it.
 */
export function schemaProblems(
  fields: readonly Field[],
  acceptsDefault: (field: Field, value: unknown) => string | undefined,
): SchemaIssue[] {
  const issues: SchemaIssue[] = [];
  let total = 0;
  const visitFields = (list: readonly Field[], path: string, depth: number) => {
    const seen = new Set<string>();
    list.forEach((field, index) => {
      total++;
      const at = `${path}.${index}`;
      if (seen.has(field.id)) issues.push({ path: `${at}.id`, message: `another field is already called ${field.id}` });
      seen.add(field.id);
      visitItem(field, at, depth);
      if (field.unique && !uniqueable.has(field.type))
        issues.push({ path: `${at}.unique`, message: `a ${field.type} field cannot be unique` });
      if (field.default !== undefined) {
        if (field.type === 'media' || field.type === 'reference')
          issues.push({ path: `${at}.default`, message: 'media and reference fields take no default' });
        else {
          const problem = acceptsDefault(field, field.default);
          if (problem) issues.push({ path: `${at}.default`, message: problem });
        }
      }
    });
  };
  const visitItem = (item: ItemDefinition, at: string, depth: number) => {
    if (depth > maxDepth) {
      issues.push({ path: at, message: `lists and objects nest at most ${maxDepth} deep` });
      return;
    }
    if (item.type === 'enum' && !item.values)
      issues.push({ path: `${at}.values`, message: 'an enum lists its values' });
    if (item.type !== 'enum' && item.values) issues.push({ path: `${at}.values`, message: 'only an enum has values' });
    if (item.values && new Set(item.values).size !== item.values.length)
      issues.push({ path: `${at}.values`, message: 'values repeat' });
    if (item.type === 'object') {
      if (!item.fields?.length) issues.push({ path: `${at}.fields`, message: 'an object lists its fields' });
      else visitFields(item.fields, `${at}.fields`, depth + 1);
    } else if (item.fields) issues.push({ path: `${at}.fields`, message: 'only an object has fields' });
    if (item.type === 'list') {
      if (!item.of) issues.push({ path: `${at}.of`, message: 'a list says what it holds' });
      else visitItem(item.of, `${at}.of`, depth + 1);
    } else if (item.of) issues.push({ path: `${at}.of`, message: 'only a list has of' });
    visitValidations(item, `${at}.validations`);
  };
  const visitValidations = (item: ItemDefinition, at: string) => {
    const rules = item.validations;
    if (!rules) return;
    for (const key of Object.keys(rules) as (keyof Validations)[]) {
      if (key !== 'message' && !allowed[item.type].includes(key))
        issues.push({ path: `${at}.${key}`, message: `does not apply to a ${item.type} field` });
    }
    const ordered = (low: 'min_length' | 'min' | 'min_items', high: 'max_length' | 'max' | 'max_items') => {
      const [a, b] = [rules[low], rules[high]];
      if (a !== undefined && b !== undefined && compare(item.type, a, b) > 0)
        issues.push({ path: `${at}.${low}`, message: `is greater than ${high}` });
    };
    ordered('min_length', 'max_length');
    ordered('min', 'max');
    ordered('min_items', 'max_items');
    if (item.type === 'text' && (rules.max_length ?? 0) > textMaxLength)
      issues.push({ path: `${at}.max_length`, message: `text holds at most ${textMaxLength} characters` });
    for (const key of ['min', 'max'] as const) {
      const value = rules[key];
      if (value === undefined) continue;
      const numeric = item.type === 'integer' || item.type === 'number';
      if (numeric ? typeof value !== 'number' : typeof value !== 'string' || !dateLike.test(value))
        issues.push({ path: `${at}.${key}`, message: numeric ? 'must be a number' : 'must be a date (YYYY-MM-DD…)' });
    }
    if (rules.pattern !== undefined) {
      const problem = patternProblem(rules.pattern);
      if (problem) issues.push({ path: `${at}.pattern`, message: problem });
    }
  };
  visitFields(fields, 'fields', 1);
  if (total > maxFields) issues.push({ path: 'fields', message: `a type has at most ${maxFields} fields in all` });
  return issues;
}

function compare(type: FieldType, a: number | string, b: number | string): number {
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (type === 'date' || type === 'datetime') return Date.parse(String(a)) - Date.parse(String(b));
  return 0;
}

/** Every reference type named anywhere in the fields (api_ids), for dependencies and copies. */
export function referencedTypes(fields: readonly Field[]): string[] {
  const found = new Set<string>();
  const visit = (item: ItemDefinition) => {
    for (const apiId of item.validations?.reference_types ?? []) found.add(apiId);
    item.fields?.forEach(visit);
    if (item.of) visit(item.of);
  };
  fields.forEach(visit);
  return [...found];
}

/** Where each reference_types list sits, for reporting api_ids that do not exist. */
export function referenceTypePaths(fields: readonly Field[]): { path: string; apiIds: string[] }[] {
  const found: { path: string; apiIds: string[] }[] = [];
  const visit = (item: ItemDefinition, at: string) => {
    if (item.validations?.reference_types)
      found.push({ path: `${at}.validations.reference_types`, apiIds: item.validations.reference_types });
    item.fields?.forEach((field, index) => visit(field, `${at}.fields.${index}`));
    if (item.of) visit(item.of, `${at}.of`);
  };
  fields.forEach((field, index) => visit(field, `fields.${index}`));
  return found;
}
