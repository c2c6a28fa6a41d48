// What an element's data must be, field by field, against its type: checked
// on every write, with every problem at once and a path for each. Drafts may
// leave required fields (and a list's least items) unfilled; publishing asks
// for everything. Rich text is HTML, stored sanitised (an allowlist,
// sanitize-html): what is read back is what was stored. Media and reference
// fields hold ids; whether those exist is asked of the database afterwards
// (core/content/links.ts), with the ids and paths collected here.
import sanitizeHtml from 'sanitize-html';
import { z } from 'zod';
import { textMaxLength, type Field, type FieldType, type ItemDefinition } from './fields.ts';
import { instant } from '../timestamp.ts';

export type DataMode = 'draft' | 'publish';
export type DataIssue = { path: string; message: string };
export type FoundId = { path: string; id: string; kinds?: readonly string[]; types?: readonly string[] };
export type UniqueValue = { field: Field; value: unknown };

export type CheckedData = {
  value: Record<string, unknown>;
  issues: DataIssue[];
  media: FoundId[];
  references: FoundId[];
  uniques: UniqueValue[];
};

const longTextMax = 100_000;
const richTextMax = 200_000;
const slugShape = /^[a-z0-9]+(?:-[a-z0-9]+)*$/;
const colorShape = /^#(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6}|[0-9a-fA-F]{8})$/;
const dateShape = /^(\d{4})-(\d{2})-(\d{2})$/;
const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const email = z.email();

/** Tags and attributes rich text keeps; everything else (scripts, styles, event handlers, javascript: URLs) goes. */
const richText: sanitizeHtml.IOptions = {
  allowedTags: [...sanitizeHtml.defaults.allowedTags, 'img', 'figure', 'figcaption', 'picture', 'source'],
  allowedAttributes: {
    ...sanitizeHtml.defaults.allowedAttributes,
    img: ['src', 'srcset', 'alt', 'title', 'width', 'height', 'loading'],
    source: ['srcset', 'type', 'media'],
    '*': ['id', 'class', 'lang', 'dir'],
  },
  allowedSchemes: ['http', 'https', 'mailto', 'tel'],
};

export const sanitizeRichText = (html: string) => sanitizeHtml(html, richText);

const isEmpty = (value: unknown) =>
  value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);

const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function validDate(text: string): boolean {
  const match = dateShape.exec(text);
  if (!match) return false;
  const date = new Date(Date.UTC(Number(match[1]), Number(match[2]) - 1, Number(match[3])));
  return date.toISOString().startsWith(text);
}

const expected: Record<FieldType, string> = {
  text: 'text',
  long_text: 'text',
  rich_text: 'HTML text',
  integer: 'a whole number',
  number: 'a number',
  boolean: 'true or false',
  date: 'a date (YYYY-MM-DD)',
  datetime: 'a date-time with its offset (ISO 8601)',
  enum: 'one of the values',
  slug: 'a slug (lower-case letters, digits and single hyphens)',
  email: 'an e-mail address',
  url: 'an http(s) URL',
  color: 'a colour (#rgb, #rrggbb or #rrggbbaa)',
  json: 'JSON',
  media: 'a media item id',
  reference: 'an element id',
  list: 'a list',
  object: 'an object',
};

/** Checks `data` against `fields`; `localizedOnly` for a translation, which holds only localized fields. */
export function checkData(
  fields: readonly Field[],
  data: Record<string, unknown>,
  mode: DataMode,
  options: { localizedOnly?: boolean; applyDefaults?: boolean } = {},
): CheckedData {
  const out: CheckedData = { value: {}, issues: [], media: [], references: [], uniques: [] };
  out.value = checkObject(fields, data, 'data', mode, out, options, true);
  return out;
}

function checkObject(
  fields: readonly Field[],
  data: Record<string, unknown>,
  path: string,
  mode: DataMode,
  out: CheckedData,
  options: { localizedOnly?: boolean; applyDefaults?: boolean },
  top: boolean,
): Record<string, unknown> {
  const byId = new Map(fields.map((field) => [field.id, field]));
  for (const key of Object.keys(data)) {
    if (!byId.has(key)) out.issues.push({ path: `${path}.${key}`, message: 'is not a field of the type' });
  }
  const value: Record<string, unknown> = {};
  for (const field of fields) {
    const at = `${path}.${field.id}`;
    let given = data[field.id];
    if (top && options.localizedOnly && !field.localized) {
      if (given !== undefined)
        out.issues.push({ path: at, message: 'is not localized: translations take it from the master' });
      continue;
    }
    if (given === undefined && options.applyDefaults && field.default !== undefined) given = field.default;
    if (isEmpty(given)) {
      const missing = field.required && mode === 'publish' && !(top && options.localizedOnly);
      if (missing) out.issues.push({ path: at, message: field.validations?.message ?? 'is required to publish' });
      // An empty list that is not required is still checked, for its least number of items.
      if (missing || !(Array.isArray(given) && field.type === 'list')) {
        if (given !== undefined) value[field.id] = given;
        continue;
      }
    }
    const checked = checkValue(field, given, at, mode, out, options);
    if (checked !== undefined) {
      value[field.id] = checked;
      if (top && field.unique) out.uniques.push({ field, value: checked });
    }
  }
  return value;
}

/** One value against its definition; the value to store (rich text sanitised), or undefined when invalid. */
function checkValue(
  item: ItemDefinition,
  given: unknown,
  at: string,
  mode: DataMode,
  out: CheckedData,
  options: { localizedOnly?: boolean; applyDefaults?: boolean },
): unknown {
  const rules = item.validations ?? {};
  const wrongType = () => {
    out.issues.push({ path: at, message: `must be ${expected[item.type]}` });
    return undefined;
  };
  const broken = (message: string) => {
    out.issues.push({ path: at, message: rules.message ?? message });
    return undefined;
  };
  switch (item.type) {
    case 'text':
    case 'long_text':
    case 'rich_text':
    case 'slug':
    case 'email':
    case 'url': {
      if (typeof given !== 'string') return wrongType();
      const text = item.type === 'rich_text' ? sanitizeRichText(given) : given;
      const ceiling = { text: textMaxLength, long_text: longTextMax, rich_text: richTextMax, slug: 200 }[
        item.type as 'text'
      ];
      if (ceiling !== undefined && text.length > ceiling) return broken(`is longer than ${ceiling} characters`);
      if (item.type === 'slug' && !slugShape.test(text)) return wrongType();
      if (item.type === 'email' && !email.safeParse(text).success) return wrongType();
      if (item.type === 'url' && !httpUrl(text)) return wrongType();
      if (rules.min_length !== undefined && text.length < rules.min_length)
        return broken(`is shorter than ${rules.min_length} characters`);
      if (rules.max_length !== undefined && text.length > rules.max_length)
        return broken(`is longer than ${rules.max_length} characters`);
      if (rules.pattern !== undefined && !new RegExp(`^(?:${rules.pattern})$`, 'u').test(text))
        return broken('does not match the pattern');
      if (rules.allowed_values && !rules.allowed_values.includes(text)) return broken('is not an allowed value');
      return text;
    }
    case 'integer':
    case 'number': {
      if (typeof given !== 'number' || !Number.isFinite(given)) return wrongType();
      if (item.type === 'integer' && !Number.isSafeInteger(given)) return wrongType();
      if (typeof rules.min === 'number' && given < rules.min) return broken(`is less than ${rules.min}`);
      if (typeof rules.max === 'number' && given > rules.max) return broken(`is greater than ${rules.max}`);
      return given;
    }
    case 'boolean':
      return typeof given === 'boolean' ? given : wrongType();
    case 'date':
    case 'datetime': {
      if (typeof given !== 'string') return wrongType();
      // A date-time is kept with the offset it was written with; instant checks it is one (years 0001-9999 in UTC).
      if (item.type === 'date' ? !validDate(given) : !instant.safeParse(given).success) return wrongType();
      const time = Date.parse(given);
      if (typeof rules.min === 'string' && time < Date.parse(rules.min)) return broken(`is before ${rules.min}`);
      if (typeof rules.max === 'string' && time > Date.parse(rules.max)) return broken(`is after ${rules.max}`);
      return given;
    }
    case 'enum':
      return typeof given === 'string' && item.values?.includes(given)
        ? given
        : broken(`must be one of: ${item.values?.join(', ')}`);
    case 'color':
      return typeof given === 'string' && colorShape.test(given) ? given : wrongType();
    case 'json':
      return given;
    case 'media':
    case 'reference': {
      if (typeof given !== 'string' || !uuidShape.test(given)) return wrongType();
      const id = given.toLowerCase();
      if (item.type === 'media') out.media.push({ path: at, id, ...optional('kinds', rules.media_kinds) });
      else out.references.push({ path: at, id, ...optional('types', rules.reference_types) });
      return id;
    }
    case 'list': {
      if (!Array.isArray(given)) return wrongType();
      if (mode === 'publish' && rules.min_items !== undefined && given.length < rules.min_items)
        return broken(`holds fewer than ${rules.min_items} items`);
      if (rules.max_items !== undefined && given.length > rules.max_items)
        return broken(`holds more than ${rules.max_items} items`);
      const before = out.issues.length;
      const items = given.map((entry, index) =>
        entry === null ? wrongType() : checkValue(item.of!, entry, `${at}.${index}`, mode, out, options),
      );
      return out.issues.length === before ? items : undefined;
    }
    case 'object': {
      if (!isPlainObject(given)) return wrongType();
      return checkObject(item.fields ?? [], given, at, mode, out, { applyDefaults: options.applyDefaults }, false);
    }
  }
}

const optional = <K extends string, V>(key: K, value: V | undefined) =>
  (value === undefined ? {} : { [key]: value }) as Partial<Record<K, V>>;

function httpUrl(text: string): boolean {
  if (text.length > 2048) return false;
  try {
    const url = new URL(text);
    return url.protocol === 'http:' || url.protocol === 'https:';
  } catch {
    return false;
  }
}

/** Whether a field accepts a value as its default, for the schema checks: its problem, or undefined. */
export function defaultProblem(field: Field, value: unknown): string | undefined {
  const checked = checkData([{ ...field, required: false }], { [field.id]: value }, 'publish');
  return checked.issues[0]?.message;
}
