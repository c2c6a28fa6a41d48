// The translate job's work, on what it finds when it runs: plan the fields
// (./plan.ts), translate the machine's through `translate` (the worker's text
// provider) or copy them, then write the translation and record the master
// hashes it took, in one transaction. The hashes recorded are those of the
// values it read, so a master edited while the job ran shows as stale.
import type { CommonQueryMethods } from '../../db/pool.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { slugify } from '../tenancy/tenants.ts';
import { recordTaken } from './group.ts';
import { adapters } from './kinds.ts';
import type { FieldFormat } from './model.ts';
import { planTranslation } from './plan.ts';
import type { TranslationJobInput } from './submit.ts';

/** Translates one field's text from one locale to another, keeping its format's markup. */
export type Translator = (
  text: string,
  field: { name: string; format: Exclude<FieldFormat, 'value' | 'slug'> },
  from: string,
  to: string,
) => Promise<string>;

export type TranslationOutput = {
  kind: string;
  master_id: string;
  translation_id: string;
  locale: string;
  mode: string;
  created: boolean;
  translated: string[];
  copied: string[];
  skipped: { name: string; reason: string }[];
  characters: number;
};

export async function runTranslation(
  db: CommonQueryMethods,
  access: SiteAccess,
  input: TranslationJobInput,
  translate: Translator,
): Promise<TranslationOutput> {
  const adapter = adapters[input.kind];
  const group = await adapter.group(db, access.site, input.id);
  const plan = planTranslation(adapter, group, input);
  const values: Record<string, unknown> = {};
  for (const field of plan.write) {
    if (field.how === 'copy') values[field.name] = field.value;
    else if (field.format === 'slug') {
      // A slug's words are translated, then made a slug again (the master's when nothing is left).
      const words = await translate(
        String(field.value).replace(/-/g, ' '),
        { ...field, format: 'plain' },
        group.master.locale,
        input.target_locale,
      );
      values[field.name] = slugify(words, String(field.value), 200);
    } else {
      const format = field.format as Exclude<FieldFormat, 'value' | 'slug'>;
      values[field.name] = await translate(
        String(field.value),
        { name: field.name, format },
        group.master.locale,
        input.target_locale,
      );
    }
  }
  const by = (how: 'machine' | 'copy') => plan.write.filter((field) => field.how === how).map((field) => field.name);
  const output = {
    kind: adapter.kind,
    master_id: group.master.id,
    locale: input.target_locale,
    mode: input.mode,
    created: !plan.translation,
    translated: by('machine'),
    copied: by('copy'),
    skipped: plan.skipped,
    characters: plan.characters,
  };
  // Nothing to change: the job is done (run twice, the second run lands here).
  if (plan.translation && !plan.write.length) return { ...output, translation_id: plan.translation.id };
  return db.transaction(async (tx) => {
    const translationId = await adapter.write(tx, access, group, input.target_locale, values);
    const target = { kind: adapter.kind, translationId, tenantId: access.site.tenant_id, siteId: access.site.id };
    await recordTaken(tx, target, group.master.hashes, by('machine'), 'machine');
    await recordTaken(tx, target, group.master.hashes, by('copy'), 'copy');
    return { ...output, translation_id: translationId };
  });
}
