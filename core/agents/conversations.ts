// Conversations with an agent on a site: the messages of successive runs,
// so a run reads what was said before it. Private to their tenant and,
// unless shared, to the member (or service account) who began them: anyone
// else is told there is no such conversation.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorId, actorUserId, type Actor } from '../actor.ts';
import { notFound } from '../errors.ts';
import { after, countOf, toPage, type PageQuery } from '../pagination.ts';
import type { SiteAccess } from '../tenancy/site-access.ts';
import { timestamp } from '../timestamp.ts';

export const citationSchema = z
  .object({
    marker: z.number().int().describe('The [n] the answer cites it by'),
    document_id: z.uuid(),
    document_title: z.string(),
    chunk_id: z.uuid(),
    excerpt: z.string().describe('The start of the chunk'),
    post_id: z.uuid().nullable(),
    url: z.string().nullable().describe('The public URL of the source post, where it is published; else null'),
  })
  .meta({ id: 'AgentCitation' });

export type Citation = z.infer<typeof citationSchema>;

export const conversationSchema = z
  .object({
    id: z.uuid(),
    site_id: z.uuid(),
    agent_id: z.uuid(),
    user_id: z.uuid().nullable().describe('The member who began it; null for a service account'),
    shared: z.boolean().describe('Seen by every member of the tenant who sees the agent; else by who began it'),
    title: z.string(),
    created_at: timestamp,
    updated_at: timestamp,
  })
  .meta({ id: 'AgentConversation' });

export const messageSchema = z
  .object({
    id: z.uuid(),
    conversation_id: z.uuid(),
    run_id: z.uuid().nullable().describe('The run (job) that wrote or answered it'),
    role: z.enum(['user', 'assistant']),
    content: z.string(),
    citations: z.array(citationSchema),
    created_at: timestamp,
  })
  .meta({ id: 'AgentMessage' });

export type Conversation = z.infer<typeof conversationSchema>;
export type Message = z.infer<typeof messageSchema>;

const conversationColumns = sql.fragment`c.id, c.site_id, c.agent_id, c.user_id, c.shared, c.title, c.created_at, c.updated_at`;
const messageColumns = sql.fragment`m.id, m.conversation_id, m.job_id as run_id, m.role, m.content, m.citations, m.created_at`;

/** Conversations of the agent on the site the actor may read: shared ones, and their own. */
const readable = (siteId: string, agentId: string, actor: Actor) =>
  sql.fragment`c.site_id = ${siteId} and c.agent_id = ${agentId} and (c.shared or c.actor_id = ${actorId(actor)})`;

export async function listConversations(
  db: CommonQueryMethods,
  { site, actor }: SiteAccess,
  agentId: string,
  query: PageQuery,
) {
  const where = readable(site.id, agentId, actor);
  const rows = await db.any(sql.type(conversationSchema)`
    select ${conversationColumns} from agent_conversations c where ${where} and ${after(query, 'c')}
    order by c.created_at, c.id limit ${query.limit + 1}`);
  return toPage(rows, query, () => countOf(db, sql.fragment`select 1 from agent_conversations c where ${where}`));
}

/** A conversation the actor may read; 404 otherwise (another's private one, another agent's, another site's). */
export async function findConversation(
  db: CommonQueryMethods,
  { site, actor }: SiteAccess,
  agentId: string,
  id: string,
): Promise<Conversation> {
  const found = await db.maybeOne(sql.type(conversationSchema)`
    select ${conversationColumns} from agent_conversations c where c.id = ${id} and ${readable(site.id, agentId, actor)}`);
  if (!found) throw notFound('No such conversation.');
  return found;
}

export async function listMessages(
  db: CommonQueryMethods,
  access: SiteAccess,
  agentId: string,
  conversationId: string,
  query: PageQuery,
) {
  await findConversation(db, access, agentId, conversationId);
  const where = sql.fragment`m.conversation_id = ${conversationId}`;
  const rows = await db.any(sql.type(messageSchema)`
    select ${messageColumns} from agent_messages m where ${where} and ${after(query, 'm')}
    order by m.created_at, m.id limit ${query.limit + 1}`);
  return toPage(rows, query, () => countOf(db, sql.fragment`select 1 from agent_messages m where ${where}`));
}

/** A new conversation, titled by the start of its first message. */
export async function startConversation(
  db: CommonQueryMethods,
  { site, actor }: SiteAccess,
  agentId: string,
  first: string,
  shared: boolean,
): Promise<Conversation> {
  return db.one(sql.type(conversationSchema)`
    insert into agent_conversations as c (tenant_id, site_id, agent_id, user_id, actor_id, shared, title)
    values (${site.tenant_id}, ${site.id}, ${agentId}, ${actorUserId(actor)}, ${actorId(actor)}, ${shared},
            ${first.replace(/\s+/g, ' ').trim().slice(0, 80)})
    returning ${conversationColumns}`);
}

/** Adds a message; an assistant's answer is written once per run (a second write of it changes nothing). */
export async function addMessage(
  db: CommonQueryMethods,
  message: {
    tenantId: string;
    conversationId: string;
    jobId: string;
    role: Message['role'];
    content: string;
    citations?: Citation[];
  },
): Promise<void> {
  // One statement: it is part of a run's settling transaction.
  await db.query(sql.typeAlias('void')`
    with added as (
      insert into agent_messages (tenant_id, conversation_id, job_id, role, content, citations)
      values (${message.tenantId}, ${message.conversationId}, ${message.jobId}, ${message.role}, ${message.content},
              ${sql.jsonb((message.citations ?? []) as never)})
      on conflict (job_id) where role = 'assistant' do nothing
    )
    update agent_conversations set updated_at = now() where id = ${message.conversationId}`);
}

/** What was said in the conversation before this run: its messages, oldest first, but this run's own. */
export async function historyBefore(db: CommonQueryMethods, conversationId: string, jobId: string, most = 40) {
  const rows = await db.any(sql.type(z.object({ role: z.enum(['user', 'assistant']), content: z.string() }))`
    select role, content from (
      select m.role, m.content, m.created_at, m.id from agent_messages m
      where m.conversation_id = ${conversationId} and m.job_id is distinct from ${jobId}
      order by m.created_at desc, m.id desc limit ${most}
    ) recent order by created_at, id`);
  return [...rows];
}
