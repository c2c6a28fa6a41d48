// Submitting a translate: the caller may change the master (and the
// translation it would change), the target is another locale of the site,
// the fields named are localized ones; the estimate is what the machine
// would translate now (a copy costs nothing). The job re-plans on what it
// finds when it runs.
import { z } from 'zod';
import type { CommonQueryMethods } from '../../db/pool.ts';
import { siteLocales } from '../content/locales.ts';
import { Problem } from '../errors.ts';
import type { Submission } from '../jobs/submit.ts';
import { generationPromptTypes, jobSystemPromptSchema, promptForJob } from '../system-prompts/for-jobs.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { translationKinds, type AnyAdapter } from './model.ts';
import { planTranslation, translateModes, unitsFor, type TranslateRequest } from './plan.ts';

export const translateRequestSchema = z
  .strictObject({
    target_locale: z.string().min(2).max(35).describe('A locale of the site other than the master’s'),
    mode: z
      .enum(translateModes)
      .default('machine')
      .describe(
        'machine: through the language model TEXT_PROVIDERS names; copy: the master’s text, for a person to translate',
      ),
    overwrite: z
      .boolean()
      .default(false)
      .describe('Write every field asked, even those a person or the machine translated and that are current'),
    fields: z
      .array(z.string().min(1).max(100))
      .min(1)
      .max(200)
      .optional()
      .describe('Only these localized fields (default: all)'),
  })
  .meta({ id: 'TranslateRequest' });

/** What the job is given. */
export const translationJobInput = z.object({
  kind: z.enum(translationKinds),
  id: z.uuid(),
  target_locale: z.string(),
  mode: z.enum(translateModes),
  overwrite: z.boolean(),
  fields: z.array(z.string()).optional(),
  system_prompt: jobSystemPromptSchema.optional(),
});
export type TranslationJobInput = z.infer<typeof translationJobInput>;

export async function translationSubmission(
  db: CommonQueryMethods,
  access: SiteAccess,
  adapter: AnyAdapter,
  id: string,
  request: TranslateRequest,
): Promise<Submission> {
  const group = await adapter.group(db, access.site, id);
  adapter.requireChange(access, group.master);
  const target = request.target_locale;
  const problem = !siteLocales(access.site).includes(target)
    ? `must be one of the site’s locales: ${siteLocales(access.site).join(', ')}`
    : target === group.master.locale
      ? 'is the master’s own locale'
      : undefined;
  if (problem)
    throw new Problem(422, 'Translate into another locale of the site.', {
      errors: [{ path: 'body.target_locale', message: problem }],
    });
  const plan = planTranslation(adapter, group, request);
  if (plan.translation) adapter.requireChange(access, plan.translation);
  // A copy asks no model, so it takes no system prompt.
  const prompt = request.mode === 'machine' ? await promptForJob(db, generationPromptTypes.translate) : {};
  const input: TranslationJobInput = { kind: adapter.kind, id: group.master.id, ...request, ...prompt };
  return {
    kind: 'translation',
    input,
    estimatedUnits: request.mode === 'machine' ? unitsFor(plan.characters) : 0,
  };
}
