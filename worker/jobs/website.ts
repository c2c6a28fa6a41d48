// Website generation, one `website` unit: the copy is written first (from
// templates, or by the model with TEXT_PROVIDER=openai), then the whole site
// is built in the settling commit (core/website/build.ts) — so nothing is
// half-made when any write is refused, and a job can only build once: the
// commit that builds is the one that marks it succeeded, and a run that
// failed rolled back everything it wrote.
import { Problem } from '../../core/errors.ts';
import { resolveSite } from '../../core/tenancy/site-access.ts';
import { jobAccess } from '../../core/jobs/job-access.ts';
import { websiteCopySchema, websiteJobInput, type WebsiteCopy } from '../../core/website/brief.ts';
import { buildWebsite, contentTypeConflict } from '../../core/website/build.ts';
import { templateCopy } from '../../core/website/templates.ts';
import type { PlannedCall } from '../../core/providers/plan.ts';
import { usesLanguageModel } from '../providers/text/chat.ts';
import { websiteCopyWithProvider } from '../providers/text/website.ts';
import { permanent } from '../../core/jobs/errors.ts';
import { defineJob } from '../job.ts';

/** A write the domain refused (a type that does not fit, say): it would be refused again. */
const refused = (error: unknown): never => {
  if (!(error instanceof Problem)) throw error;
  const details = (error.errors ?? []).map((issue) => `${issue.path} ${issue.message}`).join('; ');
  const code = error.type === contentTypeConflict ? 'content_type_conflict' : 'website_rejected';
  throw permanent(code, `${error.message}${details ? ` (${details})` : ''}`);
};

export default defineJob({
  input: websiteJobInput,
  async run(brief, context) {
    const { db, job, config } = context;
    const site = await resolveSite(db, job.site_id);
    if (!site) throw permanent('site_missing', 'The site was deleted before the website was made.');
    await context.progress(0.1, 'writing the copy');
    let copy: WebsiteCopy;
    let tokens: number | undefined;
    let call: PlannedCall | undefined;
    const model = usesLanguageModel(config);
    if (model) ({ copy, tokens, call } = await websiteCopyWithProvider(context, brief, site.default_locale));
    else copy = websiteCopySchema.parse(templateCopy(brief));
    await context.progress(0.6, 'building');
    return {
      status: 'succeeded',
      units: 1,
      output: {
        copy_source: model ? 'model' : 'template',
        provider: call?.vendor ?? 'local',
        ...(call ? { model: call.model } : {}),
        placeholder: !model,
        ...(tokens === undefined ? {} : { tokens }),
        ...(model
          ? {}
          : {
              note:
                'Copy from built-in templates filled with the brief’s own words (no language model; the tone is not applied). ' +
                'Name a language model in TEXT_PROVIDERS for written copy.',
            }),
        status: 'draft',
      },
      async commit(tx) {
        const access = await jobAccess(tx, job);
        if (!access) throw permanent('site_missing', 'The site was deleted before the website was made.');
        return buildWebsite(tx, access, brief, copy).catch(refused);
      },
    };
  },
});
