// Translate an element, media item, page or post into another locale of its
// site (core/translations/translate.ts), charged per 1,000 characters the
// machine translated; a copy costs nothing. What the translation's own
// checks refuse (a slug taken in that locale, a text too long) fails the job
// permanently with what they said.
import { Problem } from '../../core/errors.ts';
import { jobAccess } from '../../core/jobs/job-access.ts';
import { unitsFor } from '../../core/translations/plan.ts';
import { translationJobInput } from '../../core/translations/submit.ts';
import { runTranslation } from '../../core/translations/translate.ts';
import { providerTranslator } from '../providers/text/translate.ts';
import { permanent } from '../../core/jobs/errors.ts';
import { defineJob } from '../job.ts';

export default defineJob({
  input: translationJobInput,
  async run(input, context) {
    const { db, job } = context;
    const access = await jobAccess(db, job);
    if (!access) throw permanent('site_missing', 'The site was deleted before the translation ran.');
    await context.progress(0.1, 'translating');
    const translator = providerTranslator(context, input.system_prompt?.content);
    const output = await runTranslation(db, access, input, translator).catch((error: unknown) => {
      if (!(error instanceof Problem)) throw error;
      const details = (error.errors ?? []).map((issue) => `${issue.path} ${issue.message}`).join('; ');
      const code = error.status === 404 ? 'translation_source_missing' : 'translation_rejected';
      throw permanent(code, `${error.message}${details ? ` (${details})` : ''}`);
    });
    return { status: 'succeeded', units: unitsFor(output.characters), output };
  },
});
