// The MCP server of a test app, driven as a client would drive it: the app
// listening on 127.0.0.1, and the SDK's own Client on its streamable HTTP
// transport. A second app of the same database (`secondApp`) is another API
// process: MCP sessions live in the database, so either serves any of them.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { McpError } from '@modelcontextprotocol/sdk/types.js';
import { createApp, type App } from '../../api/app.ts';
import { closeServices, createServices } from '../../core/boot.ts';
import { createLogger } from '../../core/logger.ts';
import type { Services } from '../../core/services.ts';
import { checkedAgainstDocument, type TestApp } from './app.ts';
import type { Auth } from './identity.ts';

export type Listening = { url: URL; close(): Promise<void> };

/** The app on a port of 127.0.0.1; `url` is its /mcp. */
export async function listen(app: App): Promise<Listening> {
  const server = http.createServer(app).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  return {
    url: new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`),
    async close() {
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/** Another API process of the test's database: its own pool, caches and listeners. */
export async function secondApp(t: TestApp): Promise<{ app: App; services: Services; close(): Promise<void> }> {
  const services = await createServices(t.config, t.database.url, createLogger(t.config.logLevel), 'test');
  return { app: checkedAgainstDocument(createApp(services), {}), services, close: () => closeServices(services) };
}

const clients: Client[] = [];

export type McpOptions = {
  agentId?: string;
  /** Resume this session instead of initializing one. */
  sessionId?: string;
  /** How the client's requests reach the server (a balancer, say). */
  fetch?: typeof fetch;
};

/** A client of the SDK, initialized (or resuming `sessionId`) as the caller of `auth`. */
export async function connectMcp(url: URL, auth: Auth | Record<string, never>, options: McpOptions = {}) {
  const headers = { ...auth, ...(options.agentId ? { 'MCP-Agent-Id': options.agentId } : {}) };
  const transport = new StreamableHTTPClientTransport(url, {
    requestInit: { headers },
    ...(options.sessionId ? { sessionId: options.sessionId } : {}),
    ...(options.fetch ? { fetch: options.fetch } : {}),
  });
  const client = new Client({ name: 'platform-test', version: '1.0.0' });
  await client.connect(transport);
  clients.push(client);
  return { client, transport };
}

/** Closes every client connectMcp made. */
export async function closeMcpClients(): Promise<void> {
  await Promise.all(clients.splice(0).map((client) => client.close()));
}

/** The JSON-RPC error a request was refused with, and the problem document it carries. */
export async function refusal(request: Promise<unknown>): Promise<{ code: number; problem: Record<string, any> }> {
  const error = await request.then(
    () => {
      throw new Error('expected a JSON-RPC error');
    },
    (error: unknown) => error,
  );
  expect(error).toBeInstanceOf(McpError);
  const { code, data } = error as McpError;
  return { code, problem: data as Record<string, any> };
}
