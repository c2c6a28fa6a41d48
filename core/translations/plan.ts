// Which fields a translate writes, decided the same way at submit (to check
// the request and estimate its cost) and in the job (on what is there then).
// Without `overwrite`, work a person did is kept:
// - machine mode writes fields the translation lacks, fields that are stale
//   or untranslated, and fields that still hold a copy of the master's text;
// - copy mode writes fields the translation lacks and stale ones, with the
//   master's text, for a person to translate.
// A field the master leaves empty has nothing to translate. A new translation
// gets its required fields (a page's title and slug) copied when they are not
// translated.
import { Problem } from '../errors.ts';
import { isEmptyValue, type AnyAdapter, type FieldFormat, type Group, type Member } from './model.ts';
import { fieldState } from './staleness.ts';

export const translateModes = ['machine', 'copy'] as const;
export type TranslateMode = (typeof translateModes)[number];

export type TranslateRequest = {
  target_locale: string;
  mode: TranslateMode;
  overwrite: boolean;
  fields?: string[] | undefined;
};

export type PlannedField = { name: string; format: FieldFormat; value: unknown; how: 'machine' | 'copy' };

export type Plan = {
  translation: Member<unknown> | undefined;
  write: PlannedField[];
  skipped: { name: string; reason: 'master_empty' | 'up_to_date' }[];
  /** Characters the machine translates: what is paid for. */
  characters: number;
};

/** Text formats a provider translates; others are copied in either mode. */
const translatable = (format: FieldFormat) => format !== 'value';

export function planTranslation(adapter: AnyAdapter, group: Group<unknown>, request: TranslateRequest): Plan {
  const { master } = group;
  const fields = adapter.localizedFields(group);
  const unknown = (request.fields ?? []).flatMap((name, index) =>
    fields.some((field) => field.name === name)
      ? []
      : [
          {
            path: `body.fields.${index}`,
            message: `is not a localized field: ${fields.map((f) => f.name).join(', ')}`,
          },
        ],
  );
  if (unknown.length) throw new Problem(422, 'Name localized fields of the item.', { errors: unknown });
  const translation = group.translations.find((member) => member.locale === request.target_locale);
  const asked = request.fields ? fields.filter((field) => request.fields!.includes(field.name)) : fields;
  const plan: Plan = { translation, write: [], skipped: [], characters: 0 };
  for (const field of fields) {
    const value = master.values[field.name];
    const wanted = asked.includes(field);
    if (!wanted && !(field.required && !translation)) continue;
    if (isEmptyValue(value)) {
      if (wanted) plan.skipped.push({ name: field.name, reason: 'master_empty' });
      continue;
    }
    if (wanted && translation && !request.overwrite && !needsWriting(master, translation, field.name, request.mode)) {
      plan.skipped.push({ name: field.name, reason: 'up_to_date' });
      continue;
    }
    const how = wanted && request.mode === 'machine' && translatable(field.format) ? 'machine' : 'copy';
    plan.write.push({ name: field.name, format: field.format, value, how });
    if (how === 'machine') plan.characters += String(value).length;
  }
  return plan;
}

function needsWriting(master: Member<unknown>, translation: Member<unknown>, field: string, mode: TranslateMode) {
  if (isEmptyValue(translation.values[field])) return true;
  const state = fieldState(master, translation, field);
  if (state.stale) return true;
  return mode === 'machine' && state.source === 'copy';
}

/** Units of the `translation` price (per 1,000 characters, rounded up). */
export const unitsFor = (characters: number) => Math.ceil(characters / 1000);
