// Website generation: a brief in, a website job out (core/website/). It
// shapes the site's content as a whole — content types, a page tree — so,
// like content types, it is for editors and administrators (and service
// accounts with content:write); authors are refused.
import { websiteSubmission, briefSchema } from '../../core/website/brief.ts';
import { jobResponses, preferHeader, submitAndAnswer } from '../jobs/answer.ts';
import { defineRoute } from '../route.ts';
import { siteParams } from '../schemas.ts';

export const routes = [
  defineRoute({
    key: 'POST /{site_identifier}/generate-website/',
    description:
      'Turns a brief into a website, as a job paid one `website` unit: content types (hero, text_block, service; a type of that ' +
      'api_id already in the site is reused when its fields fit, else the job fails with content_type_conflict), a page tree (home ' +
      'at the root, the other pages asked as its children, in order, each with its elements placed in the `main` area), copies of ' +
      'each page and element in the other `locales` asked (translation mode copy, for a person to translate), and `posts` draft ' +
      'posts. Everything is a draft; the public navigation is the published page tree, so it shows the new pages once they are ' +
      'published. All is written in one transaction when the job settles: a refused write leaves nothing behind. The home page takes ' +
      'the first of home, home-2… free at the root. Without a text provider the copy comes from built-in templates filled with the ' +
      'brief’s words (`copy_source: template` on the output); with a language model named in TEXT_PROVIDERS it writes it (`copy_source: model`; ' +
      'an answer that is not the JSON asked fails with provider_invalid_response, charging nothing). The output lists what was made: ' +
      '`content_types`, `pages`, `navigation`, `translations`, `post_ids`. With an Idempotency-Key, a repeat answers the first job.',
    access: { site: 'manage', scope: ['jobs:write', 'content:write'] },
    idempotent: true,
    request: { params: siteParams, body: briefSchema, headers: preferHeader },
    responses: jobResponses,
    async handler({ body }, context, { req }) {
      return submitAndAnswer(context, req.get('prefer'), await websiteSubmission(context.db, context.access, body));
    },
  }),
];
