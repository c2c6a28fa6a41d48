// The MCP server's tools, by the names of core/agents/tools.ts: each mirrors
// one REST endpoint (its access, its schemas, its credits) and calls the same
// domain function, and answers what the endpoint answers (media items and
// jobs with their files' URLs). Job tools answer the job, after `wait`
// seconds at most, and send its events to `webhook` as their endpoints do.
import { z } from 'zod';
import { agentTools, type AgentTool } from '../../core/agents/tools.ts';
import { getPageWithElements } from '../../core/content/page-elements.ts';
import { Problem, notFound } from '../../core/errors.ts';
import { knowledgeSearchInput, searchKnowledge } from '../../core/knowledge/search.ts';
import { getJob } from '../../core/jobs/queries.ts';
import { submitJob, type Submission } from '../../core/jobs/submit.ts';
import { imageRequest, imageSubmission } from '../../core/media/generation.ts';
import { listMedia, mediaListQuery } from '../../core/media/library.ts';
import { speechInput, speechSubmission } from '../../core/media/speech.ts';
import { withFileUrl } from '../../core/media/urls.ts';
import { createPost, updatePost } from '../../core/posts/post-writes.ts';
import { searchLogged } from '../../core/search/analytics.ts';
import { searchQuery } from '../../core/search/query.ts';
import { jobParams, routes as jobRoutes } from '../jobs/router.ts';
import { routes as mediaRoutes } from '../media/router.ts';
import { fileLinks } from '../media/urls.ts';
import { overLimit } from '../middleware/rate-limit.ts';
import { pageParams, routes as pageRoutes } from '../pages/router.ts';
import { newPostBody, postChangesBody, postParams, routes as postRoutes } from '../posts/router.ts';
import type { RouteDefinition } from '../route.ts';
import { siteParams } from '../schemas.ts';
import { knowledgeSearchParams, routes as knowledgeRoutes } from '../agents/knowledge-search.ts';
import { routes as searchRoutes } from '../search/router.ts';
import { requestedWebhook } from '../../core/webhooks/request.ts';
import { defineTool, type ToolCall, type ToolDefinition, type ToolInput } from './tool.ts';

const route = (routes: RouteDefinition[], key: string): RouteDefinition => {
  const found = routes.find((candidate) => candidate.key === key);
  if (!found) throw new Error(`No route ${key} to mirror`);
  return found;
};

/**
 * A job submitted as its endpoint submits it (the webhook asked for checked,
 * the tenant's job rate limit, then row, reservation and queue entry), then
 * waited for.
 */
async function submitted(
  call: ToolCall,
  submission: Submission,
  { wait, webhook }: Pick<ToolInput<never, never, never>, 'wait' | 'webhook'>,
) {
  const { context, access } = call;
  const requested = requestedWebhook(context.services.config, webhook);
  const verdict = context.services.rateLimits.request('per-tenant-jobs', access!.site.tenant_id);
  if (!verdict.allowed) throw overLimit(verdict, 'jobs submitted for this tenant');
  const job = await submitJob(context.db, context.services.config, access!, { ...submission, webhook: requested });
  return call.waitFor(job, wait);
}

const searchContent = defineTool({
  name: 'search_content',
  title: 'Search a public site',
  description:
    'Full-text search of a public site’s published posts, pages, elements and ready media, as GET /search/sites/{site_identifier}: ' +
    '`q` reads like a web search (words, "a phrase", or, -word); `kind` limits the kinds (comma-separated). Logged for the ' +
    'site’s analytics like any reader’s search.',
  route: route(searchRoutes, 'GET /search/sites/{site_identifier}'),
  params: siteParams,
  query: searchQuery,
  readOnly: true,
  run: ({ query }, { context, site }) =>
    searchLogged(context.db, context.services.statistics, site!, query, context.services.searchIndexes),
});

const getPage = defineTool({
  name: 'get_page',
  title: 'Read a page',
  description:
    'A page of the site with the elements placed on it, by area and position, as GET /{site_identifier}/pages/{page_id}.',
  route: route(pageRoutes, 'GET /{site_identifier}/pages/{page_id}'),
  params: pageParams,
  readOnly: true,
  run: ({ params }, { context, access }) => getPageWithElements(context.db, access!, params.page_id),
});

const listMediaTool = defineTool({
  name: 'list_media',
  title: 'List media',
  description:
    'Media items of the site, oldest first, as GET /{site_identifier}/media/: filter by folder, kind, status, tag, text and ' +
    'creation date; `cursor` from `next_cursor` for the next page.',
  route: route(mediaRoutes, 'GET /{site_identifier}/media/'),
  params: siteParams,
  query: mediaListQuery.extend({
    include_total: z.boolean().default(false).describe('Count every matching item too (`total`)'),
  }),
  narrowed: 'arguments are JSON, not a query string: `include_total` is a boolean, not the text "true"',
  readOnly: true,
  run: async ({ query }, { context, access }) => {
    const page = await listMedia(context.db, access!, query);
    const links = fileLinks(context);
    return { ...page, items: page.items.map((item) => withFileUrl(links, access!.site, item)) };
  },
});

const createPostTool = defineTool({
  name: 'create_post',
  title: 'Write a draft post',
  description:
    'Writes a post as a draft, as POST /{site_identifier}/posts/ with status draft: a person (or update_post) publishes it. ' +
    'Markdown by default; HTML is sanitised.',
  route: route(postRoutes, 'POST /{site_identifier}/posts/'),
  params: siteParams,
  body: newPostBody.omit({ status: true, scheduled_for: true }),
  narrowed: 'an agent writes drafts: `status` is not taken, nor `scheduled_for`, which only a scheduled post has',
  run: ({ body }, { context, access }) => createPost(context.db, access!, { ...body, status: 'draft' }),
});

const updatePostTool = defineTool({
  name: 'update_post',
  title: 'Change a post',
  description:
    'Changes what is given of a post, as PATCH /{site_identifier}/posts/{post_id}; authors change only their own posts.',
  route: route(postRoutes, 'PATCH /{site_identifier}/posts/{post_id}'),
  params: postParams,
  body: postChangesBody,
  run: ({ params, body }, { context, access }) => updatePost(context.db, access!, params.post_id, body),
});

const generateImage = defineTool({
  name: 'generate_image',
  title: 'Generate images',
  description:
    'Generates images from a prompt as a job, as POST /{site_identifier}/media/generate: credits for `count` images are ' +
    'reserved now and debited per image made. Answers the job; when it succeeded, `media_ids` are the new images.',
  route: route(mediaRoutes, 'POST /{site_identifier}/media/generate'),
  params: siteParams,
  body: imageRequest,
  waits: true,
  run: async (input, call) =>
    submitted(
      call,
      await imageSubmission(call.context.db, call.context.services.config, call.site!.id, input.body),
      input,
    ),
});

const textToSpeech = defineTool({
  name: 'text_to_speech',
  title: 'Speak text',
  description:
    'Speaks the text into an audio file as a job, as POST /{site_identifier}/media/tts: credits for the estimated seconds ' +
    'are reserved now, the seconds made debited. Answers the job; when it succeeded, `media_id` is the audio.',
  route: route(mediaRoutes, 'POST /{site_identifier}/media/tts'),
  params: siteParams,
  body: speechInput,
  waits: true,
  run: (input, call) => submitted(call, speechSubmission(call.context.services.config, input.body), input),
});

const getJobTool = defineTool({
  name: 'get_job',
  title: 'Read a job',
  description:
    'A job of the site, as GET /{site_identifier}/jobs/{job_id}; with `wait`, answered when it ends or the seconds pass. ' +
    'Authors read the jobs they submitted.',
  route: route(jobRoutes, 'GET /{site_identifier}/jobs/{job_id}'),
  params: jobParams,
  waits: true,
  readOnly: true,
  run: async ({ params, wait }, call) => call.waitFor(await getJob(call.context.db, call.access!, params.job_id), wait),
});

const knowledgeSearchTool = defineTool({
  name: 'knowledge_search',
  title: 'Search an agent’s knowledge base',
  description:
    'The chunks of an agent’s knowledge base that best answer `query`, best first, with their document, score and the ' +
    'ranking that found them, as POST /api/agents/{agent_id}/knowledge-base/search (full text, or hybrid with embeddings). ' +
    'A session with an agent searches that agent’s base only.',
  route: route(knowledgeRoutes, 'POST /api/agents/{agent_id}/knowledge-base/search'),
  params: knowledgeSearchParams,
  body: knowledgeSearchInput,
  readOnly: true,
  run: ({ params, body }, { context, actor, agent }) => {
    if (agent && agent.id !== params.agent_id) throw notFound('No such agent.');
    const { db, services, signal } = context;
    return searchKnowledge({ db, config: services.config, signal }, actor, params.agent_id, body);
  },
});

/** The tools this server has, by name (the names are core/agents/tools.ts's). */
export const tools: Record<AgentTool, ToolDefinition> = {
  search_content: searchContent,
  get_page: getPage,
  list_media: listMediaTool,
  create_post: createPostTool,
  update_post: updatePostTool,
  generate_image: generateImage,
  text_to_speech: textToSpeech,
  get_job: getJobTool,
  knowledge_search: knowledgeSearchTool,
};

/** The tools a session may list and call: its agent's, or all of them in a session without one. */
export function toolsFor(allowed: readonly AgentTool[] | null): ToolDefinition[] {
  return agentTools.flatMap((name) => {
    const tool = tools[name];
    return tool && (allowed === null || allowed.includes(name)) ? [tool] : [];
  });
}

/** Refusal of a tool the session's agent does not list. */
export const notTheAgentsTool = (agentName: string, tool: string) =>
  new Problem(403, `The agent ${agentName} may not use ${tool}; its tools are listed by tools/list.`);
