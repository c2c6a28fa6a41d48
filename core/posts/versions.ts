// A post's earlier bodies. A job that replaces what a post says (a recrawl
// that found the page changed, a transform applied to the post) first keeps
// the post as it was in post_versions, then raises its version, so a client
// holding the old ETag gets 412 on its next If-Match write rather than
// overwriting the job's change unknowingly; knowledge documents taken from
// the post refresh themselves (core/knowledge/follow-posts.ts).
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { followPostChange } from '../knowledge/follow-posts.ts';
import { storedBody } from './post-writes.ts';
import { postColumns, postSchema, type Post, type PostSource } from './posts.ts';

export type Replacement = {
  title?: string;
  excerpt?: string;
  /** In `body_format` (default: the post's own); HTML is sanitised here. */
  body?: string;
  body_format?: 'html' | 'markdown';
  source?: PostSource;
};

export type Provenance = { reason: 'recrawl' | 'transform'; jobId: string; userId: string | null };

/** Keeps the post as it is now. A job run twice keeps it once (unique post and version). */
async function keepVersion(tx: CommonQueryMethods, post: Post & { tenant_id: string }, why: Provenance) {
  await tx.query(sql.typeAlias('void')`
    insert into post_versions (tenant_id, site_id, post_id, version, title, excerpt, body, body_format, source, reason, job_id)
    values (${post.tenant_id}, ${post.site_id}, ${post.id}, ${post.version}, ${post.title}, ${post.excerpt}, ${post.body},
            ${post.body_format}, ${post.source ? sql.jsonb(post.source as never) : null}, ${why.reason}, ${why.jobId})
    on conflict (post_id, version) do nothing`);
}

/** The post, locked for the change, with its tenant; null when it was deleted meanwhile. */
export async function lockPostForJob(tx: CommonQueryMethods, siteId: string, id: string) {
  return tx.maybeOne(sql.type(postSchema.extend({ tenant_id: postSchema.shape.id }))`
    select ${postColumns}, p.tenant_id from posts p where p.id = ${id} and p.site_id = ${siteId} for update`);
}

/** Keeps the current version, then writes the replacement and raises the version. */
export async function replaceContent(
  tx: CommonQueryMethods,
  post: Post & { tenant_id: string },
  replacement: Replacement,
  why: Provenance,
): Promise<Post> {
  await keepVersion(tx, post, why);
  const format = replacement.body_format ?? post.body_format;
  const body = replacement.body === undefined ? post.body : storedBody(replacement.body, format);
  const updated = await tx.one(sql.type(postSchema)`
    update posts p set
      title = ${replacement.title ?? post.title},
      excerpt = ${replacement.excerpt ?? post.excerpt},
      body = ${body},
      body_format = ${format},
      source = ${replacement.source ? sql.jsonb(replacement.source as never) : sql.fragment`p.source`},
      version = p.version + 1,
      updated_by = ${why.userId}
    where p.id = ${post.id}
    returning ${postColumns}`);
  await followPostChange(tx, post.id, post, updated);
  return updated;
}

/** Records that the source was checked and had not changed: the content and version stay as they are. */
export async function touchSource(tx: CommonQueryMethods, postId: string, source: PostSource): Promise<void> {
  await tx.query(sql.typeAlias('void')`update posts set source = ${sql.jsonb(source as never)} where id = ${postId}`);
}
