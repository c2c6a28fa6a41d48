// /mcp: the agent operations as a Model Context Protocol server on the
// streamable HTTP transport (@modelcontextprotocol/sdk). The request path is
// the REST API's: the same bearer tokens (users and service accounts), rate
// limits, timeouts and problems; the SDK's transport then speaks JSON-RPC.
// POST carries the client's messages (answers stream back as server-sent
// events), GET opens the session's stream for messages the server starts,
// DELETE ends the session. Sessions are kept in PostgreSQL, so any API
// process serves any of them (./sessions.ts).
import type { Request } from 'express';
import { z } from 'zod';
import { agentInstructions, usableAgent } from '../../core/agents/agents.ts';
import { agentTools } from '../../core/agents/tools.ts';
import { Problem } from '../../core/errors.ts';
import { cacheControlHeader, problemResponse, problemSchema } from '../responses.ts';
import { defineRoute, type ResponseSpec } from '../route.ts';
import { noContent } from '../schemas.ts';
import { end, initialize, initializes, resume } from './sessions.ts';

const jsonRpcMessage = z
  .object({ jsonrpc: z.literal('2.0') })
  .loose()
  .meta({ id: 'JsonRpcMessage', description: 'A JSON-RPC 2.0 request, notification or response of MCP' });

const jsonRpcError = z
  .object({
    jsonrpc: z.literal('2.0'),
    error: z.object({ code: z.number().int(), message: z.string(), data: z.unknown().optional() }).loose(),
    id: z.union([z.string(), z.number(), z.null()]),
  })
  .meta({ id: 'JsonRpcError', description: 'The transport’s refusal, as a JSON-RPC error' });

/** An answer the request path gives as a problem, or the SDK's transport as a JSON-RPC error. */
const problemOrRpc = (description: string): ResponseSpec => ({
  description,
  schema: z.union([problemSchema, jsonRpcError]),
  contentType: ['application/problem+json', 'application/json'],
});

const sessionHeader = {
  'Mcp-Session-Id': { description: 'The session’s id, to send back in Mcp-Session-Id on every later request' },
};

const eventStream: ResponseSpec = {
  description: 'The answers (and the server’s notifications, such as a job’s progress) as server-sent events',
  contentType: 'text/event-stream',
  schema: z.string().describe('Events `message`, each `data:` one JSON-RPC message'),
  headers: {
    ...sessionHeader,
    'Cache-Control': { ...cacheControlHeader, description: '`no-cache, no-transform`', required: true },
  },
};

const headers = z.object({
  'mcp-session-id': z.string().optional().describe('The session, from the initialize answer; absent on initialize'),
  'mcp-agent-id': z
    .uuid()
    .optional()
    .describe(
      'On initialize: the agent the session is configured with. It must be one the caller sees and not disabled; the session ' +
        'then lists and may call only the agent’s tools, on the sites of the tenants it is assigned to, and the server’s ' +
        'instructions are the system prompt of the agent’s type (`agent` when it names none) and then its own. Read again on every call: an agent disabled or changed meanwhile takes effect at once.',
    ),
  'mcp-protocol-version': z.string().optional().describe('After initialize: the protocol version agreed'),
});

const sessionOnly = z.object({ 'mcp-session-id': z.string().describe('The session, from the initialize answer') });

/** The session a GET or DELETE names: 400 without the header. */
function sessionId(req: Request): string {
  const id = req.get('mcp-session-id');
  if (!id) throw new Problem(400, 'Send the Mcp-Session-Id the initialize answer gave.');
  return id;
}

const toolList = agentTools.join(', ');

export const routes = [
  defineRoute({
    key: 'POST /mcp',
    access: 'signed-in',
    description:
      'The Model Context Protocol server (streamable HTTP transport, JSON-RPC 2.0): the agent operations as tools — ' +
      `${toolList} — each mirroring its REST endpoint with the same access rules, credits and argument schemas. Send ` +
      '`Accept: application/json, text/event-stream`. Start with an initialize request (optionally with `MCP-Agent-Id`); the ' +
      'answer’s `Mcp-Session-Id` goes on every later request, with the same caller’s token. Tools that address a site take ' +
      '`site_identifier`; job tools take `wait` (seconds) and answer the job. A refused call is a tool error whose text is a ' +
      'problem document (status 403, 404, 422, 402...). One JSON-RPC message a request: a batch (an array) is a 422.',
    // One message a request (MCP 2025-06-18 dropped JSON-RPC batches): a batch would be up to a hundred tool
    // calls, run at once on the pool, for one request counted by the rate limit.
    request: { body: jsonRpcMessage, headers },
    responses: {
      200: eventStream,
      202: { description: 'Accepted: the body held only notifications or responses' },
      400: problemOrRpc('Not an MCP message the session can take (a second initialize, no session id, bad version)'),
      403: problemResponse('The agent is disabled'),
      404: problemOrRpc('No such session (ended, expired, another caller’s), or no such agent for the caller'),
      406: problemOrRpc('The Accept header does not take both application/json and text/event-stream'),
    },
    async handler({ body }, context, http) {
      const id = http.req.get('mcp-session-id');
      if (id) {
        await resume(context, id, http, body);
        return {};
      }
      if (!initializes(body)) {
        throw new Problem(400, 'Send the Mcp-Session-Id the initialize answer gave, or an initialize request first.');
      }
      const agentId = http.req.get('mcp-agent-id');
      if (agentId !== undefined && !z.uuid().safeParse(agentId).success) {
        throw new Problem(422, 'MCP-Agent-Id is not an agent id.', {
          errors: [{ path: 'headers.mcp-agent-id', message: 'a UUID' }],
        });
      }
      const agent = agentId === undefined ? null : await usableAgent(context.db, context.actor, agentId);
      const configured = agent && { id: agent.id, instructions: await agentInstructions(context.db, agent) };
      await initialize(context, configured, http, body);
      return {};
    },
  }),

  defineRoute({
    key: 'GET /mcp',
    access: 'signed-in',
    description:
      'The session’s stream of messages the server starts (server-sent events; `Accept: text/event-stream`). It ends at the ' +
      'endpoint’s timeout; clients open it again.',
    request: { headers: sessionOnly },
    responses: {
      200: eventStream,
      400: problemOrRpc('No Mcp-Session-Id, or a protocol version the server does not speak'),
      404: problemOrRpc('No such session for the caller'),
      406: problemOrRpc('The Accept header does not take text/event-stream'),
    },
    async handler(_input, context, http) {
      await resume(context, sessionId(http.req), http);
      return {};
    },
  }),

  defineRoute({
    key: 'DELETE /mcp',
    access: 'signed-in',
    description:
      'Ends the session: its id is no longer found, by any process. A stream still open on it ends at its timeout.',
    request: { headers: sessionOnly },
    responses: {
      ...noContent('Ended'),
      400: problemResponse('No Mcp-Session-Id'),
      404: problemResponse('No such session for the caller'),
    },
    async handler(_input, context, { req }) {
      await end(context, sessionId(req));
      return {};
    },
  }),
];
