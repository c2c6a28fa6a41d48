// MCP sessions, served by whichever API process a request lands on. A
// session is a row in PostgreSQL (core/mcp/sessions.ts): whose it is and its
// agent. Each request gets an SDK server and streamable HTTP transport of its
// own, which answer it and are closed: so no process holds a session, and
// /mcp needs no routing by Mcp-Session-Id. The initialize request's transport
// is the SDK's stateful one, which hands out the session's id; later
// requests are served by a stateless one, the session having been checked
// here first (the caller's, not over). Every request still brings its own
// token, and one from anyone else does not find the session (404, as an
// unknown one).
//
// What this gives up: a notifications/cancelled for a call running on
// another request reaches nothing (closing that call's stream cancels it, as
// its deadline does), and nothing is kept to send on a GET stream later.
import { randomUUID } from 'node:crypto';
import type { Request, Response } from 'express';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { actorId } from '../../core/actor.ts';
import { Problem, notFound } from '../../core/errors.ts';
import { endMcpSession, findMcpSession, openMcpSession } from '../../core/mcp/sessions.ts';
import { createMcpServer } from './server.ts';
import type { CallContext } from './tool.ts';

type Http = { req: Request; res: Response };

const noSuchSession = () =>
  notFound('No such MCP session: it ended, expired or was opened by someone else. Initialize a new one.');

/** Answers the request with a server of the session's agent on `transport`, then closes both. */
async function serve(
  server: ReturnType<typeof createMcpServer>,
  transport: StreamableHTTPServerTransport,
  context: CallContext,
  { req, res }: Http,
  body?: unknown,
): Promise<void> {
  await server.connect(transport);
  try {
    // The SDK's auth info carries the request's context to the handlers; the token itself stays here.
    const auth = { token: '', clientId: actorId(context.actor), scopes: [], extra: { context } };
    await transport.handleRequest(Object.assign(req, { auth }), res, body);
  } finally {
    await server.close();
  }
}

/** Whether the message is an initialize request, which opens a session rather than continuing one. */
export const initializes = (body: unknown) => isInitializeRequest(body);

/**
 * Opens a session for an initialize request. The row is written before the
 * transport answers, so no client ever holds an id that a process would not
 * find; a request the transport refuses (406, 415...) takes it away again.
 */
export async function initialize(
  context: CallContext,
  agent: { id: string; instructions: string } | null,
  http: Http,
  body: unknown,
): Promise<void> {
  const id = randomUUID();
  await openMcpSession(context.db, context.actor, id, agent?.id ?? null);
  const server = createMcpServer({ id, agent_id: agent?.id ?? null }, agent?.instructions || undefined);
  await serve(server, new StreamableHTTPServerTransport({ sessionIdGenerator: () => id }), context, http, body);
  if (http.res.statusCode !== 200) await endMcpSession(context.db, context.actor, id);
}

/** Serves a request of the caller's session `id`: a POST's messages, or a GET's stream. 404 when it is not theirs or is over. */
export async function resume(context: CallContext, id: string, http: Http, body?: unknown): Promise<void> {
  const session = await findMcpSession(context.db, context.actor, id);
  if (!session) throw noSuchSession();
  if (body !== undefined && initializes(body)) {
    throw new Problem(400, 'The session is initialized already: initialize without Mcp-Session-Id for a new one.');
  }
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  // At the deadline a GET's stream ends cleanly (the timeout cannot answer 504 once it has begun).
  context.signal.addEventListener('abort', () => {
    if (context.signal.reason instanceof Problem) transport.closeStandaloneSSEStream();
  });
  await serve(createMcpServer(session, undefined), transport, context, http, body);
}

/** Ends the caller's session `id`: no process finds it afterwards. 404 when it is not theirs or is over. */
export async function end(context: CallContext, id: string): Promise<void> {
  if (!(await endMcpSession(context.db, context.actor, id))) throw noSuchSession();
}
