// Adding documents to an agent's knowledge base: a snapshot of a post (its
// title, excerpt and body as they are now, with the post's version, so the
// document can tell when the post changed), or a plain-text or Markdown text.
// Either belongs to a site of a tenant the agent is assigned to, and waits to
// be indexed (compute-rag-index).
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { actorUserId, type Actor } from '../actor.ts';
import { Problem, notFound } from '../errors.ts';
import { requireAssigned, requireVisibleAgent, requireWriter } from './access.ts';
import { findDocument, type KnowledgeDocument } from './documents.ts';
import type { BodyFormat } from './text.ts';

/** What a post contributes: its text as it is now. */
export const postSourceRow = z.object({
  id: z.uuid(),
  tenant_id: z.uuid(),
  site_id: z.uuid(),
  title: z.string(),
  excerpt: z.string(),
  body: z.string(),
  body_format: z.enum(['markdown', 'html']),
  locale: z.string(),
  version: z.number().int(),
});
export type PostSource = z.infer<typeof postSourceRow>;

export const findPostSource = (db: CommonQueryMethods, postId: string) =>
  db.maybeOne(sql.type(postSourceRow)`
    select id, tenant_id, site_id, title, excerpt, body, body_format, locale, version from posts where id = ${postId}`);

const escapeHtml = (text: string) =>
  text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]!);

/** The snapshot of a post: its excerpt (when it has one) as the first paragraph, then its body, in its format. */
export function postSnapshot(post: PostSource): { title: string; body: string; format: BodyFormat; version: number } {
  const excerpt = post.excerpt.trim();
  const lead = !excerpt ? '' : post.body_format === 'html' ? `<p>${escapeHtml(excerpt)}</p>\n` : `${excerpt}\n\n`;
  return { title: post.title, body: lead + post.body, format: post.body_format, version: post.version };
}

const inserted = z.object({ id: z.uuid() });

async function answer(db: CommonQueryMethods, actor: Actor, id: string): Promise<KnowledgeDocument> {
  const found = await findDocument(db, actor, id);
  if (!found) throw notFound('No such document.');
  const { tenant_id: _tenant, body: _body, ...document } = found;
  return document;
}

/** Adds a snapshot of the post; 409 when the post is already in the knowledge base. */
export async function addPost(
  db: CommonQueryMethods,
  actor: Actor,
  agentId: string,
  postId: string,
): Promise<KnowledgeDocument> {
  await requireVisibleAgent(db, actor, agentId);
  const post = await findPostSource(db, postId);
  if (!post) throw notFound('No such post.');
  await requireWriter(db, actor, post.site_id, 'No such post.');
  await requireAssigned(db, agentId, post.tenant_id);
  const snapshot = postSnapshot(post);
  const id = await db.maybeOneFirst(sql.type(inserted)`
    insert into knowledge_documents
      (agent_id, tenant_id, site_id, kind, title, locale, body, body_format, post_id, post_version, created_by)
    values (${agentId}, ${post.tenant_id}, ${post.site_id}, 'post', ${snapshot.title}, ${post.locale}, ${snapshot.body},
            ${snapshot.format}, ${post.id}, ${snapshot.version}, ${actorUserId(actor)})
    on conflict (agent_id, post_id) where post_id is not null do nothing
    returning id`);
  if (!id) {
    const existing = await db.oneFirst(sql.type(inserted)`
      select id from knowledge_documents where agent_id = ${agentId} and post_id = ${post.id}`);
    throw new Problem(
      409,
      'The post is already in this knowledge base; compute its index again to take the post’s new text.',
      { extensions: { document_id: existing } },
    );
  }
  return answer(db, actor, id);
}

export const fromTextBody = z.strictObject({
  site_identifier: z
    .string()
    .min(1)
    .max(100)
    .describe('The site (id or slug) the document belongs to: a site of a tenant the agent is assigned to'),
  title: z.string().trim().min(1).max(300),
  content: z.string().min(1).max(1_000_000).describe('The text, in `format`'),
  format: z
    .enum(['plain', 'markdown'])
    .default('markdown')
    .describe('plain (paragraphs split at blank lines) or markdown'),
  locale: z
    .string()
    .min(2)
    .max(35)
    .optional()
    .describe('Its language, for full-text indexing (stemming); the site’s default locale when not given'),
});
export type FromTextBody = z.output<typeof fromTextBody>;

/** Adds a plain-text or Markdown document for one of the caller's sites. */
export async function addText(
  db: CommonQueryMethods,
  actor: Actor,
  agentId: string,
  body: FromTextBody,
): Promise<KnowledgeDocument> {
  await requireVisibleAgent(db, actor, agentId);
  const { site } = await requireWriter(db, actor, body.site_identifier);
  await requireAssigned(db, agentId, site.tenant_id);
  const id = await db.oneFirst(sql.type(inserted)`
    insert into knowledge_documents (agent_id, tenant_id, site_id, kind, title, locale, body, body_format, created_by)
    values (${agentId}, ${site.tenant_id}, ${site.id}, 'text', ${body.title}, ${body.locale ?? site.default_locale},
            ${body.content}, ${body.format}, ${actorUserId(actor)})
    returning id`);
  return answer(db, actor, id);
}
