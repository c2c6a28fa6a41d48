// Whether a translation's field is stale: the master changed that field after
// the translation last took it. A field's state is
// - current: the master's value hashes as it did when the translation took it;
// - stale: the master's value changed since;
// - untranslated: the translation never took it and the master has a value;
// - empty: neither was ever filled (nothing to translate).
// Stale and untranslated fields are what a translator has to look at.
import { z } from 'zod';
import { timestamp } from '../timestamp.ts';
import { isEmptyValue, takenSources, type Member } from './model.ts';

export const fieldStates = ['current', 'stale', 'untranslated', 'empty'] as const;
export type FieldState = (typeof fieldStates)[number];

export const fieldStateSchema = z
  .object({
    state: z.enum(fieldStates),
    stale: z.boolean().describe('The field needs a translator: stale or untranslated'),
    source: z
      .enum(takenSources)
      .nullable()
      .describe('Who last wrote it from the master: machine, copy (the master’s text, still to translate) or person'),
    taken_at: timestamp.nullable().describe('When it last took the master’s value'),
  })
  .meta({ id: 'TranslationFieldState' });

export type FieldStateView = z.infer<typeof fieldStateSchema>;

export function fieldState(master: Member<unknown>, translation: Member<unknown>, field: string): FieldStateView {
  const taken = translation.taken[field];
  const state: FieldState = taken
    ? taken.hash === master.hashes[field]
      ? 'current'
      : 'stale'
    : isEmptyValue(master.values[field])
      ? 'empty'
      : 'untranslated';
  return {
    state,
    stale: state === 'stale' || state === 'untranslated',
    source: taken?.source ?? null,
    taken_at: taken?.taken_at ?? null,
  };
}

/** Every localized field's state in a translation. */
export const fieldStatesOf = (master: Member<unknown>, translation: Member<unknown>, fields: readonly string[]) =>
  Object.fromEntries(fields.map((field) => [field, fieldState(master, translation, field)]));

/** The localized fields that need a translator. */
export const staleFields = (master: Member<unknown>, translation: Member<unknown>, fields: readonly string[]) =>
  fields.filter((field) => fieldState(master, translation, field).stale);
