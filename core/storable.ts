// PostgreSQL cannot store a NUL character or an unpaired UTF-16 surrogate in
// text or jsonb, though JSON allows both. Input carrying them is refused up
// front, field by field, rather than failing deep in a query. So is a value
// nested deeper than any document needs: JSON.parse takes 100,000 levels, but
// walking them (here, in JSON.stringify, in PostgreSQL's jsonb parser) runs
// out of stack.

import type { ProblemField } from './errors.ts';

/** Levels of arrays and objects a stored value may have; rich text needs a few dozen at most. */
export const maxNesting = 100;

export function unstorableFields(value: unknown, path: string, found: ProblemField[] = [], depth = 0): ProblemField[] {
  if (typeof value === 'string') {
    if (value.includes('\u0000') || !value.isWellFormed())
      found.push({ path, message: 'contains a NUL character or an unpaired surrogate, which cannot be stored' });
  } else if (value && typeof value === 'object' && depth >= maxNesting) {
    found.push({ path, message: `is nested more than ${maxNesting} levels deep` });
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => unstorableFields(item, `${path}.${index}`, found, depth + 1));
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) unstorableFields(item, `${path}.${key}`, found, depth + 1);
  }
  return found;
}
