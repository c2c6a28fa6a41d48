// What an agent's answer cites: the knowledge-base chunks its retrievals
// found, numbered in the order they were first found, so the model can cite
// them as [1], [2]; an answer's citations are the numbers it used. A chunk of
// a post links to the post's public page while the post is published.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { KnowledgeSearchResult } from '../knowledge/search.ts';
import type { Citation } from './conversations.ts';

type Hit = KnowledgeSearchResult['items'][number];

/** The chunks found so far, each with its marker; a chunk found twice keeps its first. */
export class Sources {
  readonly #byChunk = new Map<string, { marker: number; hit: Hit }>();

  /** The hits of a search, each with its marker, as the model is shown them. */
  add(result: Pick<KnowledgeSearchResult, 'items'>) {
    return result.items.map((hit) => {
      const known = this.#byChunk.get(hit.chunk_id);
      const marker = known?.marker ?? this.#byChunk.size + 1;
      if (!known) this.#byChunk.set(hit.chunk_id, { marker, hit });
      return { marker, document: hit.document.title, content: hit.content };
    });
  }

  /** The sources the answer cites by [n], in the order of their numbers. */
  citedBy(answer: string): { marker: number; hit: Hit }[] {
    const used = new Set([...answer.matchAll(/\[(\d{1,4})\]/g)].map((match) => Number(match[1])));
    return [...this.#byChunk.values()].filter((source) => used.has(source.marker)).sort((a, b) => a.marker - b.marker);
  }

  all() {
    return [...this.#byChunk.values()];
  }
}

const publishedPost = z.object({ id: z.uuid(), slug: z.string(), site_slug: z.string() });

/** The citations of the sources, with the public URL of each published post among them. */
export async function citationsOf(
  db: CommonQueryMethods,
  /** PUBLIC_URL; without it the URLs are paths on the API's own host. */
  publicUrl: string | undefined,
  sources: { marker: number; hit: Hit }[],
): Promise<Citation[]> {
  const postIds = [...new Set(sources.flatMap((source) => source.hit.document.post_id ?? []))];
  const posts = postIds.length
    ? await db.any(sql.type(publishedPost)`
        select p.id, p.slug, s.slug as site_slug from posts p join sites s on s.id = p.site_id
        where p.id = any(${sql.array(postIds, 'uuid')}) and p.status = 'published'`)
    : [];
  const urls = new Map(
    posts.map((post) => [post.id, `${publicUrl ?? ''}/public/${post.site_slug}/posts/${post.slug}`]),
  );
  return sources.map(({ marker, hit }) => ({
    marker,
    document_id: hit.document.id,
    document_title: hit.document.title,
    chunk_id: hit.chunk_id,
    excerpt: hit.content.slice(0, 300),
    post_id: hit.document.post_id,
    url: (hit.document.post_id && urls.get(hit.document.post_id)) ?? null,
  }));
}
