// Transfer prompts: named templates with {{variables}} for handing work from
// one agent or step to another. Global admins write them; every signed-in
// caller lists them.
import {
  createTransferPrompt,
  deleteTransferPrompt,
  listTransferPrompts,
  transferPromptChange,
  transferPromptInput,
  transferPromptListQuery,
  transferPromptSchema,
  updateTransferPrompt,
} from '../../core/transferprompts/prompts.ts';
import { pageSchema } from '../../core/pagination.ts';
import { problemResponse } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { noContent, uuidParams } from '../schemas.ts';

const taken = problemResponse('Another transfer prompt has this name (compared regardless of case)');
const disagreement =
  'Every {{name}} in the template must be declared in variables and every variable used (422 names each that is not).';

export const routes = [
  defineRoute({
    key: 'GET /transferprompts/',
    access: 'signed-in',
    description: 'The transfer prompts, by name unless sorted otherwise.',
    request: { query: transferPromptListQuery },
    responses: { 200: { description: 'A page of transfer prompts', schema: pageSchema(transferPromptSchema) } },
    async handler({ query }, { db }) {
      return { body: await listTransferPrompts(db, query) };
    },
  }),

  defineRoute({
    key: 'POST /transferprompts/',
    access: 'global-admin',
    description: `Adds a transfer prompt. ${disagreement}`,
    request: { body: transferPromptInput },
    responses: {
      // No Location: the spec has no GET of one transfer prompt (the list holds them).
      201: { description: 'The transfer prompt', schema: transferPromptSchema },
      409: taken,
    },
    async handler({ body }, { db, actor }) {
      return { status: 201, body: await createTransferPrompt(db, actor, body) };
    },
  }),

  defineRoute({
    key: 'PATCH /transferprompts/{prompt_id}',
    access: 'global-admin',
    description: `Changes the fields sent. ${disagreement} The result is checked, so a template changed alone must still use exactly the variables stored.`,
    request: { params: uuidParams('prompt_id'), body: transferPromptChange },
    responses: { 200: { description: 'The transfer prompt', schema: transferPromptSchema }, 409: taken },
    async handler({ params, body }, { db, actor }) {
      return { body: await updateTransferPrompt(db, actor, params.prompt_id, body) };
    },
  }),

  defineRoute({
    key: 'DELETE /transferprompts/{prompt_id}',
    access: 'global-admin',
    request: { params: uuidParams('prompt_id') },
    responses: noContent('Deleted'),
    async handler({ params }, { db }) {
      await deleteTransferPrompt(db, params.prompt_id);
      return { status: 204 };
    },
  }),
];
