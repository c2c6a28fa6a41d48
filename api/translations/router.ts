// Translations of elements, media, pages and posts: for each kind, the state
// of its translations (GET), a translate job, and a sync of the non-localized
// fields. The three routes are the same for every kind (one adapter each,
// core/translations/); only who may call them differs: content kinds as
// their elements, pages and posts routes (content:read / content:write),
// media as the media library (media:read / media:write), and authors change
// only what they made, as their PATCH says.
import { z } from 'zod';
import { adapters } from '../../core/translations/kinds.ts';
import type { TranslationKind } from '../../core/translations/model.ts';
import { readTranslations, translationsOverviewSchema } from '../../core/translations/overview.ts';
import { translateRequestSchema, translationSubmission } from '../../core/translations/submit.ts';
import { syncResultSchema, syncTranslations } from '../../core/translations/sync.ts';
import { jobResponses, preferHeader, submitAndAnswer } from '../jobs/answer.ts';
import { defineRoute, type RouteDefinition } from '../route.ts';
import { siteParams } from '../schemas.ts';

type Keys = {
  read: `GET /${string}`;
  translate: `POST /${string}`;
  sync: `POST /${string}`;
};

/** The three routes of a kind; `param` is the id's path parameter, `area` the scopes' area. */
function kindRoutes(kind: TranslationKind, param: string, area: 'content' | 'media', keys: Keys): RouteDefinition[] {
  const adapter = adapters[kind];
  const params = siteParams.extend({ [param]: z.uuid() });
  const idOf = (values: Record<string, string>) => values[param]!;
  const write = `${area}:write` as const;
  return [
    defineRoute({
      key: keys.read,
      access: { site: 'read', scope: `${area}:read` },
      description:
        `The ${adapter.noun} (by its id or a translation’s) and its translations: for each, every localized field’s state — ` +
        '`current`, `stale` (the master changed it since the translation took it), `untranslated` or `empty` — and who last wrote it ' +
        '(machine, copy or person). A person’s edit of a translation’s field counts as taking the master’s current value. ' +
        '`missing_locales` lists the site’s locales without a translation.',
      request: { params },
      responses: { 200: { description: 'The master and its translations', schema: translationsOverviewSchema } },
      async handler({ params }, { db, access }) {
        return { body: await readTranslations(db, access, adapter, idOf(params)) };
      },
    }),
    defineRoute({
      key: keys.translate,
      access: { site: 'write', scope: ['jobs:write', write] },
      idempotent: true,
      description:
        `Creates or updates the ${adapter.noun}’s translation in \`target_locale\`, field by field, as a \`translation\` job ` +
        '(priced per 1,000 characters the machine translates; a copy costs nothing). `mode=machine` uses the text provider ' +
        '(TEXT_PROVIDERS naming a language model; otherwise the job fails with `translation_provider_not_configured`); rich text keeps its markup, or the ' +
        'job fails with `translation_markup_changed`. `mode=copy` writes the master’s text for a person to translate. Without ' +
        '`overwrite`, a person’s or the machine’s current work is kept: machine mode writes missing, stale and copied fields, copy ' +
        'mode missing and stale ones. The master’s field hashes are recorded, so later master edits show as stale.',
      request: { params, body: translateRequestSchema, headers: preferHeader },
      responses: jobResponses,
      async handler({ params, body }, context, { req }) {
        const submission = await translationSubmission(context.db, context.access, adapter, idOf(params), body);
        return submitAndAnswer(context, req.get('prefer'), submission);
      },
    }),
    defineRoute({
      key: keys.sync,
      access: { site: 'write', scope: write },
      description:
        `Copies the ${adapter.noun}’s non-localized fields (\`synced_fields\`) into every translation, in one transaction, and says per ` +
        'translation what changed and which localized fields are stale. It never writes a localized field. Fields translations read ' +
        'from the master as they are served (`inherited_fields`) need no copy.',
      // No options: one given (a `fields` list, say) is refused rather than silently ignored.
      request: { params, body: z.strictObject({}).optional() },
      responses: { 200: { description: 'What each translation got', schema: syncResultSchema } },
      async handler({ params }, { db, access }) {
        return { body: await syncTranslations(db, access, adapter, idOf(params)) };
      },
    }),
  ];
}

export const routes: RouteDefinition[] = [
  ...kindRoutes('elements', 'element_id', 'content', {
    read: 'GET /{site_identifier}/translations/elements/{element_id}',
    translate: 'POST /{site_identifier}/translations/elements/{element_id}/translate',
    sync: 'POST /{site_identifier}/translations/elements/{element_id}/sync-translations',
  }),
  ...kindRoutes('media', 'media_id', 'media', {
    read: 'GET /{site_identifier}/translations/media/{media_id}',
    translate: 'POST /{site_identifier}/translations/media/{media_id}/translate',
    sync: 'POST /{site_identifier}/translations/media/{media_id}/sync-translations',
  }),
  ...kindRoutes('pages', 'page_id', 'content', {
    read: 'GET /{site_identifier}/translations/pages/{page_id}',
    translate: 'POST /{site_identifier}/translations/pages/{page_id}/translate',
    sync: 'POST /{site_identifier}/translations/pages/{page_id}/sync-translations',
  }),
  ...kindRoutes('posts', 'post_id', 'content', {
    read: 'GET /{site_identifier}/translations/posts/{post_id}',
    translate: 'POST /{site_identifier}/translations/posts/{post_id}/translate',
    sync: 'POST /{site_identifier}/translations/posts/{post_id}/sync-translations',
  }),
];
