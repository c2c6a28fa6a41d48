// One MCP session's server: tools/list and tools/call over the tools of
// ./tools.ts, the site's content as resources (./resources.ts) and the
// system and transfer prompts as prompts (./prompts.ts). The SDK's low-level
// Server is used rather than McpServer because what a session may call is
// decided per call (the agent may have been changed or disabled since the
// session began) and a refusal must be a problem, as the REST API answers
// it. Each server lives for one HTTP request (./sessions.ts), and serves it
// as that request's caller, with its database, deadline and log.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type CallToolResult,
  type ServerNotification,
  type ServerRequest,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import { usableAgent, type Agent } from '../../core/agents/agents.ts';
import { isAgentTool } from '../../core/agents/tools.ts';
import { Problem, type ProblemBody } from '../../core/errors.ts';
import type { Job } from '../../core/jobs/model.ts';
import { service } from '../../core/version.ts';
import { waitForJob } from '../jobs/answer.ts';
import { toProblem } from '../middleware/problems.ts';
import { argumentsSchema, asArguments, jsonSchemaOf, type CallContext, type ToolDefinition } from './tool.ts';
import { tools, toolsFor } from './tools.ts';
import { servePrompts } from './prompts.ts';
import { serveResources } from './resources.ts';
import { mcpToolStep } from './tool-steps.ts';

type Extra = RequestHandlerExtra<ServerRequest, ServerNotification>;
type SessionAgent = (Agent & { tenant_ids: string[] }) | null;

/** The HTTP request a message arrived on, handed over by ./router.ts as the transport's auth info. */
export function callContextOf(extra: Extra): CallContext {
  const context = extra.authInfo?.extra?.context as CallContext | undefined;
  if (!context) throw new McpError(ErrorCode.InternalError, 'The request carries no caller.');
  return context;
}

/** How tools/list shows a tool: its arguments and answer as JSON Schema, from the zod schemas. */
function listing(tool: ToolDefinition): Tool {
  const success = tool.route.responses[201] ?? tool.route.responses[200];
  return {
    name: tool.name,
    title: tool.title,
    description: tool.description,
    inputSchema: jsonSchemaOf(argumentsSchema(tool), 'input') as Tool['inputSchema'],
    ...(success?.schema ? { outputSchema: jsonSchemaOf(success.schema, 'output') as Tool['outputSchema'] } : {}),
    annotations: { readOnlyHint: tool.readOnly ?? false, openWorldHint: false },
  };
}

/** The problem a failed call answers: its paths name the arguments; anything unexpected is logged, and a 500. */
function problemOf(error: unknown, context: CallContext, name: string): ProblemBody {
  let problem = toProblem(error);
  if (!problem && context.signal.aborted) {
    problem = new Problem(504, 'The call did not finish within the request’s timeout.');
  }
  if (!problem || problem.status >= 500) context.log.error({ err: error, tool: name }, 'MCP tool failed');
  problem ??= new Problem(500, 'An unexpected error occurred. It has been logged with the request id.');
  return { ...asArguments(problem).toBody('/mcp'), request_id: context.requestId };
}

/** A problem as a tool's error: the problem document as text (structured content is kept for answers). */
const failed = (problem: ProblemBody): CallToolResult => ({
  isError: true,
  content: [{ type: 'text', text: JSON.stringify(problem) }],
});

function succeeded(answer: unknown): CallToolResult {
  const structured = JSON.parse(JSON.stringify(answer)) as Record<string, unknown>;
  return { content: [{ type: 'text', text: JSON.stringify(structured) }], structuredContent: structured };
}

/** A wait for a job that tells the client its progress, when it asked to hear it (a progress token). */
function waiter(context: CallContext, extra: Extra, progressToken: string | number | undefined) {
  return async (job: Job, seconds: number | undefined): Promise<Job> => {
    if (seconds === undefined || seconds === 0) return job;
    let told = -1;
    const seen = (current: Job) => {
      if (progressToken === undefined || current.progress <= told) return;
      told = current.progress;
      void extra
        .sendNotification({
          method: 'notifications/progress',
          params: { progressToken, progress: current.progress, total: 1, message: current.stage || current.status },
        })
        .catch(() => {});
    };
    const signal = AbortSignal.any([context.signal, extra.signal]);
    const { services, db, deadline } = context;
    return (await waitForJob({ services, db, deadline, signal }, job, seconds, seen)).job;
  };
}

/**
 * The server of session `session`, configured with an agent (or none), whose
 * instructions are the agent's. Every tools/call it serves is recorded as a
 * step of the session (./tool-steps.ts).
 */
export function createMcpServer(
  session: { id: string; agent_id: string | null },
  instructions: string | undefined,
): Server {
  const agentId = session.agent_id;
  const server = new Server(
    { name: 'content-agent-platform', title: 'Content and Agent Platform', version: service.version },
    { capabilities: { tools: {}, resources: {}, prompts: {} }, ...(instructions ? { instructions } : {}) },
  );
  /** The session's agent as it is now: one disabled or hidden since the session began is refused. */
  const agentNow = (context: CallContext): Promise<SessionAgent> =>
    agentId === null ? Promise.resolve(null) : usableAgent(context.db, context.actor, agentId);

  serveResources(server, { contextOf: callContextOf, agentNow });
  servePrompts(server, { contextOf: callContextOf, agentNow });

  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    const context = callContextOf(extra);
    let agent: SessionAgent;
    try {
      agent = await agentNow(context);
    } catch (error) {
      if (error instanceof Problem) throw new McpError(ErrorCode.InvalidRequest, error.message);
      throw error;
    }
    return { tools: toolsFor(agent?.tools ?? null).map(listing) };
  });

  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const context = callContextOf(extra);
    const { name } = request.params;
    const tool = isAgentTool(name) ? tools[name] : undefined;
    // No tool was called: a protocol error, as the SDK answers one, and no step.
    if (!tool) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    const args = request.params.arguments ?? {};
    const step = mcpToolStep(context, { sessionId: session.id, requestId: extra.requestId }, tool.name, args);
    try {
      const agent = await agentNow(context);
      const waitFor = waiter(context, extra, request.params._meta?.progressToken);
      return succeeded(await step.call(tool, { context, agent, waitFor }));
    } catch (error) {
      const problem = problemOf(error, context, tool.name);
      await step.refused(problem);
      return failed(problem);
    }
  });
  return server;
}
