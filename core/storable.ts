// PostgreSQL cannot store a NUL character or an unpaired UTF-16 surrogate in
// text or jsonb, though JSON allows both. Input carrying them is refused up
// front, field by field, rather than failing deep in a query.
import type { ProblemField } from './errors.ts';

export function unstorableFields(value: unknown, path: string, found: ProblemField[] = []): ProblemField[] {
  if (typeof value === 'string') {
    if (value.includes('\u0000') || !value.isWellFormed())
      found.push({ path, message: 'contains a NUL character or an unpaired surrogate, which cannot be stored' });
  } else if (Array.isArray(value)) {
    value.forEach((item, index) => unstorableFields(item, `${path}.${index}`, found));
  } else if (value && typeof value === 'object') {
    for (const [key, item] of Object.entries(value)) unstorableFields(item, `${path}.${key}`, found);
  }
  return found;
}
