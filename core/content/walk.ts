// Finding and replacing the ids an element's data holds, by its type's
// fields: what public reads resolve (referenced elements, media items) to a
// depth the client chooses. Only fields of type reference and media count; an
// id typed into a text field stays text.
import type { Field, ItemDefinition } from './fields.ts';

export type FoundIds = { elements: Set<string>; media: Set<string> };

export function collectIds(fields: readonly Field[], data: Record<string, unknown>, into: FoundIds): FoundIds {
  const visit = (item: ItemDefinition, value: unknown) => {
    if (value === null || value === undefined) return;
    if (item.type === 'reference' && typeof value === 'string') into.elements.add(value);
    else if (item.type === 'media' && typeof value === 'string') into.media.add(value);
    else if (item.type === 'list' && Array.isArray(value) && item.of) value.forEach((entry) => visit(item.of!, entry));
    else if (item.type === 'object' && value && typeof value === 'object')
      for (const field of item.fields ?? []) visit(field, (value as Record<string, unknown>)[field.id]);
  };
  for (const field of fields) visit(field, data[field.id]);
  return into;
}

/**
 * A copy of data with reference and media ids replaced by what `found` holds
 * for them: a single value becomes null when nothing public is there, a list
 * loses the entries that are not.
 */
export function replaceIds(
  fields: readonly Field[],
  data: Record<string, unknown>,
  found: { elements: Map<string, unknown>; media: Map<string, unknown> },
): Record<string, unknown> {
  const replace = (item: ItemDefinition, value: unknown): unknown => {
    if (value === null || value === undefined) return value;
    if (item.type === 'reference' && typeof value === 'string') return found.elements.get(value) ?? null;
    if (item.type === 'media' && typeof value === 'string') return found.media.get(value) ?? null;
    if (item.type === 'list' && Array.isArray(value) && item.of) {
      const inner = item.of;
      const resolvable = inner.type === 'reference' || inner.type === 'media';
      return value.map((entry) => replace(inner, entry)).filter((entry) => !resolvable || entry !== null);
    }
    if (item.type === 'object' && value && typeof value === 'object' && !Array.isArray(value)) {
      const object = { ...(value as Record<string, unknown>) };
      for (const field of item.fields ?? [])
        if (field.id in object) object[field.id] = replace(field, object[field.id]);
      return object;
    }
    return value;
  };
  const copy = { ...data };
  for (const field of fields) if (field.id in copy) copy[field.id] = replace(field, copy[field.id]);
  return copy;
}
