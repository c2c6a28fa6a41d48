// MCP sessions of this process: each an SDK streamable HTTP transport and its
// server, found by the Mcp-Session-Id the client sends back. A session
// belongs to the caller who opened it (a user or a service account): every
// request still brings its own token, and one from anyone else does not find
// the session (404, as an unknown one). Sessions live in the memory of the
// process that opened them: behind several API processes, /mcp is routed by
// Mcp-Session-Id, or a client that lands elsewhere is told 404 and opens a
// new one, as the MCP specification has clients do. Idle ones are closed, and
// so are a caller's least recently used past a few at once.
import { randomUUID } from 'node:crypto';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { actorId, type Actor } from '../../core/actor.ts';
import { notFound } from '../../core/errors.ts';
import { createMcpServer } from './server.ts';

export type McpSession = {
  id: string;
  owner: string;
  transport: StreamableHTTPServerTransport;
  server: Server;
  lastSeen: number;
};

/** A session unused for this long is closed (its client is told 404 and opens another). */
const idleMs = 30 * 60_000;
/** A caller's sessions past this many close, least recently used first: a client that never ends its sessions cannot grow the process. */
export const sessionsPerCaller = 16;
const sweepEveryMs = 60_000;

const ownerOf = (actor: Actor) => `${actor.kind}:${actorId(actor)}`;

const noSuchSession = () =>
  notFound('No such MCP session: it ended, was opened by someone else or in another process. Initialize a new one.');

export class McpSessions {
  readonly #sessions = new Map<string, McpSession>();
  #sweeper: NodeJS.Timeout | undefined;

  /**
   * A new session's transport and server, for an initialize request. It is
   * kept only once the transport has initialized it (forget() otherwise).
   */
  async open(actor: Actor, agent: { id: string; instructions: string } | null): Promise<McpSession> {
    const id = randomUUID();
    const session: McpSession = {
      id,
      owner: ownerOf(actor),
      server: createMcpServer(agent?.id ?? null, agent?.instructions || undefined),
      transport: new StreamableHTTPServerTransport({
        sessionIdGenerator: () => id,
        onsessioninitialized: () => this.#keep(session),
      }),
      lastSeen: Date.now(),
    };
    session.transport.onclose = () => {
      this.#sessions.delete(id);
    };
    await session.server.connect(session.transport);
    return session;
  }

  /** The caller's session by its id; 404 for one unknown here or opened by someone else. */
  find(id: string, actor: Actor): McpSession {
    const session = this.#sessions.get(id);
    if (!session || session.owner !== ownerOf(actor)) throw noSuchSession();
    session.lastSeen = Date.now();
    return session;
  }

  /** Drops a session the request did not initialize (it was not an initialize request). */
  async forget(session: McpSession): Promise<void> {
    if (!this.#sessions.has(session.id)) await session.server.close();
  }

  /** Ends the session: its streams close and its id is no longer found. */
  async close(session: McpSession): Promise<void> {
    await session.server.close();
    this.#sessions.delete(session.id);
  }

  get size(): number {
    return this.#sessions.size;
  }

  #keep(session: McpSession): void {
    this.#sessions.set(session.id, session);
    const own = [...this.#sessions.values()].filter((other) => other.owner === session.owner);
    if (own.length > sessionsPerCaller) {
      own.sort((x, y) => x.lastSeen - y.lastSeen);
      for (const old of own.slice(0, own.length - sessionsPerCaller)) void this.close(old);
    }
    this.#sweeper ??= setInterval(() => this.#sweep(), sweepEveryMs).unref();
  }

  #sweep(): void {
    const now = Date.now();
    for (const session of this.#sessions.values()) {
      if (now - session.lastSeen > idleMs) void this.close(session);
    }
    if (this.#sessions.size === 0) {
      clearInterval(this.#sweeper);
      this.#sweeper = undefined;
    }
  }
}
