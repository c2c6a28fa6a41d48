// System prompts: the guidance text of each kind of generation, by type.
// Global admins write them; every signed-in caller (users and service
// accounts) reads them. The text jobs read theirs when they are submitted
// (core/system-prompts/for-jobs.ts).
import { z } from 'zod';
import {
  deleteSystemPrompt,
  findSystemPrompt,
  listSystemPrompts,
  promptTypeSchema,
  saveSystemPrompt,
  systemPromptDetailSchema,
  systemPromptInput,
  systemPromptListQuery,
  systemPromptSchema,
  versionsQuery,
} from '../../core/system-prompts/prompts.ts';
import { pageSchema } from '../../core/pagination.ts';
import { locationHeader } from '../responses.ts';
import { defineRoute } from '../route.ts';
import { noContent } from '../schemas.ts';

const params = z.object({ prompt_type: promptTypeSchema });

const used =
  'The generation jobs read these types: seo (SEO titles, descriptions and alt text), transform (post transforms), ' +
  'translate (machine translation), website (website generation); agents name theirs (agent by convention). ' +
  'A stored prompt comes first in the model’s instructions, before what the job itself asks (the item, limits, ' +
  'language and the JSON answer it reads, which a prompt cannot change); without one, the built-in instructions alone. ' +
  'A job copies the text when it is submitted and keeps it through retries; its input records the type and version.';

export const routes = [
  defineRoute({
    key: 'GET /system-prompts/',
    access: 'signed-in',
    description: `Every stored system prompt with its current text, by type. ${used}`,
    request: { query: systemPromptListQuery },
    responses: { 200: { description: 'A page of system prompts', schema: pageSchema(systemPromptSchema) } },
    async handler({ query }, { db }) {
      return { body: await listSystemPrompts(db, query) };
    },
  }),

  defineRoute({
    key: 'GET /system-prompts/{prompt_type}',
    access: 'signed-in',
    description: 'The current text of a type and its versions, newest first, with who wrote each and when.',
    request: { params, query: versionsQuery },
    responses: { 200: { description: 'The system prompt and its versions', schema: systemPromptDetailSchema } },
    async handler({ params, query }, { db }) {
      return { body: await findSystemPrompt(db, params.prompt_type, query) };
    },
  }),

  defineRoute({
    key: 'POST /system-prompts/{prompt_type}',
    access: 'global-admin',
    description:
      'Creates the prompt of a type (201, version 1) or makes its next version (200); the earlier versions are kept. ' +
      `Sending the current text and description again changes nothing and makes no version (200). ${used}`,
    request: { params, body: systemPromptInput },
    responses: {
      200: { description: 'Updated (or unchanged)', schema: systemPromptSchema },
      201: { description: 'Created', schema: systemPromptSchema, headers: { Location: locationHeader } },
    },
    async handler({ params, body }, { db, actor }) {
      const { prompt, outcome } = await saveSystemPrompt(db, actor, params.prompt_type, body);
      if (outcome !== 'created') return { body: prompt };
      return { status: 201, body: prompt, headers: { Location: `/system-prompts/${prompt.prompt_type}` } };
    },
  }),

  defineRoute({
    key: 'DELETE /system-prompts/{prompt_type}',
    access: 'global-admin',
    description:
      'Deletes the prompt of a type with all its versions; jobs submitted from then on use their built-in instructions. ' +
      'Jobs already submitted keep the text they copied. Saving the type again starts at version 1.',
    request: { params },
    responses: noContent('Deleted'),
    async handler({ params }, { db }) {
      await deleteSystemPrompt(db, params.prompt_type);
      return { status: 204 };
    },
  }),
];
