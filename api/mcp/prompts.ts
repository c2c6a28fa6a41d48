// The MCP server's prompts: the system prompts (`system/{prompt_type}`) and
// the transfer prompts (`transfer/{name}`), which every signed-in caller
// reads over REST too (GET /system-prompts/, GET /transferprompts/). A
// transfer prompt takes its declared variables as arguments, all required,
// and prompts/get answers its template filled in; a system prompt takes
// none and is answered as its text. MCP messages are the user's or the
// assistant's only: both are one user message, and a system prompt's
// description says to give it to the model as its system prompt.
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  GetPromptRequestParamsSchema,
  GetPromptRequestSchema,
  ListPromptsRequestSchema,
  PaginatedRequestParamsSchema,
  type GetPromptResult,
  type Prompt,
} from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { Problem, notFound, type ProblemField } from '../../core/errors.ts';
import {
  findSystemPrompt,
  listSystemPrompts,
  promptTypeSchema,
  systemPromptListQuery,
  type SystemPrompt,
} from '../../core/system-prompts/prompts.ts';
import {
  listTransferPrompts,
  transferPromptByName,
  transferPromptListQuery,
  type TransferPrompt,
} from '../../core/transferprompts/prompts.ts';
import { renderTransferPrompt } from '../../core/transferprompts/render.ts';
import type { SessionOf } from './resources.ts';
import { answering, anyParams, paramsOf } from './rpc-error.ts';
import type { CallContext } from './tool.ts';

const promptsPerPage = 100;

const systemListing = (prompt: SystemPrompt): Prompt => ({
  name: `system/${prompt.prompt_type}`,
  title: `System prompt: ${prompt.prompt_type}`,
  description:
    `${prompt.description ? `${prompt.description} ` : ''}The system prompt of ${prompt.prompt_type} generation ` +
    `(version ${prompt.version}): give it to the model as its system prompt.`,
});

const transferListing = (prompt: TransferPrompt): Prompt => ({
  name: `transfer/${prompt.name}`,
  title: prompt.name,
  ...(prompt.description ? { description: prompt.description } : {}),
  arguments: prompt.variables.map((variable) => ({
    name: variable.name,
    ...(variable.description ? { description: variable.description } : {}),
    required: true,
  })),
});

// prompts/list walks the system prompts by type, then the transfer prompts by name, each with its own list's cursor.
const positionSchema = z.strictObject({ part: z.enum(['system', 'transfer']), cursor: z.string().max(500).optional() });
type Position = z.infer<typeof positionSchema>;

const encode = (position: Position) => Buffer.from(JSON.stringify(position)).toString('base64url');

function decode(cursor: string | undefined): Position {
  if (cursor === undefined) return { part: 'system' };
  try {
    return positionSchema.parse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
  } catch {
    throw new Problem(400, 'The cursor is not valid; use nextCursor from the previous page.');
  }
}

async function listPrompts(context: CallContext, cursor: string | undefined) {
  const at = decode(cursor);
  const prompts: Prompt[] = [];
  if (at.part === 'system') {
    const query = systemPromptListQuery.parse({ limit: promptsPerPage, cursor: at.cursor });
    const page = await listSystemPrompts(context.db, query);
    prompts.push(...page.items.map(systemListing));
    if (page.next_cursor) return { prompts, nextCursor: encode({ part: 'system', cursor: page.next_cursor }) };
  }
  const limit = promptsPerPage - prompts.length;
  if (limit === 0) return { prompts, nextCursor: encode({ part: 'transfer' }) };
  const transferCursor = at.part === 'transfer' ? at.cursor : undefined;
  const page = await listTransferPrompts(context.db, transferPromptListQuery.parse({ limit, cursor: transferCursor }));
  prompts.push(...page.items.map(transferListing));
  return page.next_cursor
    ? { prompts, nextCursor: encode({ part: 'transfer', cursor: page.next_cursor }) }
    : { prompts };
}

/** A system prompt takes no arguments: any given is refused, as a misspelt variable of a transfer prompt is. */
function requireNoArguments(name: string, given: Record<string, string>): void {
  const errors: ProblemField[] = Object.keys(given).map((key) => ({
    path: `arguments.${key}`,
    message: `the prompt ${name} takes no arguments`,
  }));
  if (errors.length > 0) throw new Problem(422, `The prompt ${name} takes no arguments.`, { errors });
}

async function getPrompt(context: CallContext, name: string, given: Record<string, string>): Promise<GetPromptResult> {
  const [, part, key = ''] = /^(system|transfer)\/(.+)$/.exec(name) ?? [];
  if (part === 'system' && promptTypeSchema.safeParse(key).success) {
    const prompt = await findSystemPrompt(context.db, key, { versions_limit: 0 });
    requireNoArguments(name, given);
    return {
      description: systemListing(prompt).description,
      messages: [{ role: 'user', content: { type: 'text', text: prompt.content } }],
    };
  }
  const prompt = part === 'transfer' ? await transferPromptByName(context.db, key) : null;
  if (!prompt) throw notFound(`No prompt ${name}: prompts/list names them (system/{type}, transfer/{name}).`);
  // Rendered as an agent run renders it: every variable given, and no other.
  const text = await renderTransferPrompt(context.db, prompt.id, given, { prompt: 'name', variables: 'arguments' });
  return {
    ...(prompt.description ? { description: prompt.description } : {}),
    messages: [{ role: 'user', content: { type: 'text', text } }],
  };
}

export function servePrompts(server: Server, { contextOf, agentNow }: SessionOf): void {
  server.setRequestHandler(anyParams(ListPromptsRequestSchema), (request, extra) => {
    const context = contextOf(extra);
    return answering(context, 'prompts/list', async () => {
      const params = paramsOf(PaginatedRequestParamsSchema.optional(), request.params);
      // A session whose agent was disabled meanwhile is refused, as for everything else.
      await agentNow(context);
      return listPrompts(context, params?.cursor);
    });
  });

  server.setRequestHandler(anyParams(GetPromptRequestSchema), (request, extra) => {
    const context = contextOf(extra);
    return answering(context, 'prompts/get', async () => {
      const params = paramsOf(GetPromptRequestParamsSchema, request.params);
      await agentNow(context);
      return getPrompt(context, params.name, params.arguments ?? {});
    });
  });
}
