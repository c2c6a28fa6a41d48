// Agent runs and conversations on a site (beyond the specification; see
// api/extensions.tsv): start a run of an agent assigned to the site's
// tenant, read it with its steps, cancel it, follow it; and the
// conversations its runs keep. A run is a job: it is answered like every job
// (202 and Location, Prefer: wait, Idempotency-Key, webhooks).
import { z } from 'zod';
import { agentForSite, getRun, runRequest, runSchema, startRun } from '../../core/agents/runs.ts';
import { conversationSchema, listConversations, listMessages, messageSchema } from '../../core/agents/conversations.ts';
import { jobSchema } from '../../core/jobs/model.ts';
import { cancelJob } from '../../core/jobs/queries.ts';
import { withJobFileUrls } from '../../core/media/urls.ts';
import { pageQuery, pageSchema } from '../../core/pagination.ts';
import { defineRoute } from '../route.ts';
import { siteParams } from '../schemas.ts';
import { cacheControlHeader, insufficientCreditsSchema, problemResponse, problemSchema } from '../responses.ts';
import { answerJob, jobResponses, preferHeader } from '../jobs/answer.ts';
import { fileLinks } from '../media/urls.ts';
import { runEventSchema } from '../../core/agents/run-events.ts';
import { streamRunEvents } from './run-stream.ts';

/** The 402 of a spent monthly budget (core/agents/budgets.ts). */
const budgetSpentSchema = problemSchema
  .extend({
    budget: z
      .enum(['agent_budget', 'tenant_budget'])
      .describe('Which budget is spent: the agent’s in this tenant, or the tenant’s for all runs'),
    monthly_budget: z.number().int(),
    used: z.number().describe('Credits used by runs this month (UTC)'),
    resets_at: z.string().describe('When the budget starts again (the next month, UTC)'),
  })
  .meta({ id: 'AgentBudgetSpentProblem', description: 'A problem of type /problems/agent-budget-spent' });

const agentParams = siteParams.extend({ agent_id: z.uuid() });
const runParams = agentParams.extend({ run_id: z.uuid() });
const conversationParams = agentParams.extend({ conversation_id: z.uuid() });

const runs = { site: 'write', scope: 'jobs:write' } as const;
const reads = { site: 'read', scope: 'jobs:read' } as const;

export const routes = [
  defineRoute({
    key: 'POST /{site_identifier}/agents/{agent_id}/runs',
    access: runs,
    idempotent: true,
    description:
      'Asks an agent assigned to the site’s tenant to do something, as a job of kind `agent_run`. Its `input` is text, or a ' +
      'transfer prompt (`prompt_id`) rendered with its `variables`. It goes on with a conversation (`conversation_id`) or ' +
      'begins one. The agent’s instructions, model and temperature drive a chat with its tools (the MCP server’s, narrowed ' +
      'to the agent’s list), acting with your access, never more: a tool you may not use answers the model 403 and the ' +
      'run goes on. It stops at `max_steps` model calls or `max_tokens` tokens, saying why. Credits for `max_tokens` at ' +
      'the model’s price are reserved (402 when not available); the run is charged the sum of its steps and the rest ' +
      'released. With no language model configured, the local runtime answers (free) by quoting the agent’s knowledge ' +
      'base. The job’s `output` has the `answer` and its `citations` ([n] in the answer). Honours Idempotency-Key and `Prefer: wait=N`.',
    request: { params: agentParams, body: runRequest, headers: preferHeader },
    responses: {
      ...jobResponses,
      402: {
        description:
          'Not enough credits for what the run may cost (an InsufficientCreditsProblem: which balance, how many, how it ' +
          'is funded), or a monthly budget for agent runs is spent (type /problems/agent-budget-spent: which budget, ' +
          'what it was, what is used, when it starts again)',
        schema: z.union([insufficientCreditsSchema, budgetSpentSchema]),
        contentType: 'application/problem+json',
      },
      404: problemResponse('No such site, or no such agent assigned to its tenant, or no such transfer prompt'),
    },
    async handler({ params, body }, context, { req }) {
      context.limitJobs(context.site.tenant_id);
      const { job } = await startRun(context.db, context.services.config, context.access, params.agent_id, body, {
        webhook: context.webhook ?? null,
        priority: context.priority,
      });
      return answerJob(context, req.get('prefer'), job, 'submitted');
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/agents/{agent_id}/runs/{run_id}',
    access: reads,
    description:
      'A run of the agent: its job (status, credits, and in `output` the answer with its citations) and its steps, each ' +
      'model call and tool call with its input, output, tokens, duration and cost. Authors see their own runs.',
    request: { params: runParams },
    responses: { 200: { description: 'The run', schema: runSchema } },
    async handler({ params }, { db, access }) {
      return { body: await getRun(db, access, params.agent_id, params.run_id) };
    },
  }),

  defineRoute({
    key: 'POST /{site_identifier}/agents/{agent_id}/runs/{run_id}/cancel',
    access: runs,
    description:
      'Cancels the run: it stops at its next step, the model call in flight is aborted, and what it had not used of its ' +
      'reservation is released. 409 once it has finished.',
    request: { params: runParams },
    responses: {
      200: { description: 'The canceled run’s job', schema: jobSchema },
      409: problemResponse('The run has already finished'),
    },
    async handler({ params }, context) {
      const { db, access } = context;
      await getRun(db, access, params.agent_id, params.run_id);
      const job = await cancelJob(db, access, params.run_id);
      // Answered as the job endpoints answer a job (POST …/jobs/{job_id}/cancel), with its media's file URLs.
      return { body: withJobFileUrls(fileLinks(context), access.site, job) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/agents/{agent_id}/runs/{run_id}/events',
    access: reads,
    description:
      'The run as it happens, as server-sent events (`text/event-stream`): each event is `id: <id>`, ' +
      '`event: <type>` and `data: <JSON>`, the JSON carrying its `type` too (the AgentRunEvent schema). In order:\n\n' +
      '- `run.started` (`run_id`, `agent_id`, `conversation_id`, `started_at`): a worker took the run on;\n' +
      '- `text.delta` (`step`, `offset`, `text`): the model’s text as it writes it, a few pieces a second; a step’s ' +
      'text is `text.slice(0, offset) + piece` (it begins again at 0 when the model is asked again for that step);\n' +
      '- `tool_call.started` (`step`, `tool_call_id`, `name`, `arguments` as the model wrote them) and ' +
      '`tool_call.finished` (the same, with `status` ok or refused and `duration_ms`); what the tool answered is in ' +
      'the step’s `output` (GET .../runs/{run_id});\n' +
      '- `citations` (`citations`, as in the answer): what the answer cites by [n], once it succeeded;\n' +
      '- `run.finished` (`status` succeeded, failed or canceled; `answer`, `stopped`, `stopped_because`, ' +
      '`credits_charged`, `error`): the last event; the stream then ends.\n\n' +
      'What the run’s record keeps — `run.started`, the tool calls, `citations`, `run.finished` — is sent first to a ' +
      'client who connects late or comes back; text is sent live only (the answer is in `run.finished`). Send ' +
      '`Last-Event-ID` (EventSource does) to hear only what came after that event. The stream also ends when the ' +
      'endpoint’s timeout is near, so a client reconnects with Last-Event-ID to go on; a comment every 15 s keeps a ' +
      'quiet stream open. The job’s own changes are at GET /{site_identifier}/jobs/{job_id}/events.',
    request: {
      params: runParams,
      headers: z.object({
        'last-event-id': z
          .string()
          .max(100)
          .optional()
          .describe('The id of the last event heard: only events after it are sent'),
      }),
    },
    responses: {
      200: {
        description: 'A stream of the run’s events, each event’s `data` one of these, by its `type`',
        contentType: 'text/event-stream',
        schema: runEventSchema,
        headers: {
          'Cache-Control': { ...cacheControlHeader, description: '`no-cache, no-transform`', required: true },
        },
      },
    },
    async handler({ params }, context, { req, res }) {
      const { run } = await getRun(context.db, context.access, params.agent_id, params.run_id);
      await streamRunEvents(context, res, run, req.get('last-event-id'));
      return {};
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/agents/{agent_id}/conversations',
    access: reads,
    description:
      'The conversations with the agent on the site that you may read: those you began, and shared ones. Oldest first.',
    request: { params: agentParams, query: pageQuery },
    responses: { 200: { description: 'A page of conversations', schema: pageSchema(conversationSchema) } },
    async handler({ params, query }, { db, access }) {
      await agentForSite(db, access, params.agent_id);
      return { body: await listConversations(db, access, params.agent_id, query) };
    },
  }),

  defineRoute({
    key: 'GET /{site_identifier}/agents/{agent_id}/conversations/{conversation_id}/messages',
    access: reads,
    description:
      'The messages of a conversation, oldest first: each run’s input and the agent’s answer with its citations. 404 for a ' +
      'conversation you may not read.',
    request: { params: conversationParams, query: pageQuery },
    responses: { 200: { description: 'A page of messages', schema: pageSchema(messageSchema) } },
    async handler({ params, query }, { db, access }) {
      await agentForSite(db, access, params.agent_id);
      return { body: await listMessages(db, access, params.agent_id, params.conversation_id, query) };
    },
  }),
];
