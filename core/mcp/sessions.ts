// MCP sessions in PostgreSQL (migration 0046): who opened each, with which
// agent, and when it was last used, so that any API process serves any
// session. A session is found only by the caller who opened it (a user, or a
// service account), and only while it has been used within the last 30
// minutes; past that it is over, as an unknown one is. A caller keeps a few
// sessions at once: opening one more ends their least recently used, so a
// client that never ends its sessions cannot grow the table.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Actor } from '../actor.ts';

/** A session unused for this long is over (its client is told 404 and initializes again). */
export const idleMinutes = 30;
/** A caller's sessions past this many end, least recently used first. */
export const sessionsPerCaller = 16;

export type McpSessionRow = { id: string; agent_id: string | null };

const rowSchema = z.object({ id: z.uuid(), agent_id: z.uuid().nullable() });

const uuidShape = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const idle = sql.fragment`make_interval(mins => ${idleMinutes})`;

/** The caller's own sessions, as SQL over mcp_sessions. */
const ownedBy = (actor: Actor) =>
  actor.kind === 'user'
    ? sql.fragment`user_id = ${actor.userId}`
    : sql.fragment`service_account_id = ${actor.serviceAccountId}`;

/**
 * Records a new session of the caller, and in the same statement ends
 * whatever has expired and the caller's sessions past the few kept (the new
 * one is not yet visible to those deletes, hence one fewer kept).
 */
export async function openMcpSession(
  db: CommonQueryMethods,
  actor: Actor,
  id: string,
  agentId: string | null,
): Promise<void> {
  const [userId, serviceAccountId, tenantId] =
    actor.kind === 'user' ? [actor.userId, null, null] : [null, actor.serviceAccountId, actor.tenantId];
  await db.query(sql.typeAlias('void')`
    with
      expired as (delete from mcp_sessions where last_used_at < now() - ${idle}),
      surplus as (
        delete from mcp_sessions where id in (
          select id from mcp_sessions where ${ownedBy(actor)}
          order by last_used_at desc, created_at desc offset ${sessionsPerCaller - 1}))
    insert into mcp_sessions (id, user_id, service_account_id, tenant_id, agent_id)
    values (${id}, ${userId}, ${serviceAccountId}, ${tenantId}, ${agentId})`);
}

/**
 * The caller's session by its id, if it is not over; null otherwise (an
 * unknown id, someone else's, an expired one). Using it keeps it alive: its
 * time of use is written at most once a minute, so a client's run of calls
 * costs one read each and not a write each.
 */
export async function findMcpSession(db: CommonQueryMethods, actor: Actor, id: string): Promise<McpSessionRow | null> {
  if (!uuidShape.test(id)) return null;
  return db.maybeOne(sql.type(rowSchema)`
    with
      found as (
        select id, agent_id, last_used_at from mcp_sessions
        where id = ${id} and ${ownedBy(actor)} and last_used_at >= now() - ${idle}),
      touched as (
        update mcp_sessions s set last_used_at = now() from found
        where s.id = found.id and found.last_used_at < now() - interval '1 minute')
    select id, agent_id from found`);
}

/** Ends the caller's session; false when there was none to end (an expired one is removed, but was over already). */
export async function endMcpSession(db: CommonQueryMethods, actor: Actor, id: string): Promise<boolean> {
  if (!uuidShape.test(id)) return false;
  const live = await db.maybeOneFirst(sql.type(z.object({ live: z.boolean() }))`
    delete from mcp_sessions where id = ${id} and ${ownedBy(actor)}
    returning last_used_at >= now() - ${idle} as live`);
  return live === true;
}
