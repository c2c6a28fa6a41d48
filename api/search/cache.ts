// Search and suggestion answers kept by this process (or Redis), like public
// delivery's (../public-content/answers.ts): the same query of the same site
// is answered from what was kept until a change to the site's search
// documents, or to the site itself, is announced (db/migrations/0029). A
// reader's query is asked again and again (the head of a site's queries is
// most of its searches), and ranking it again would find the same hits.
// Kept answers age out after PUBLIC_CACHE_SECONDS, so the recency boost of
// ranking is at most that old.
import type { Request } from 'express';
import { keep, type Computing } from '../public-content/answers.ts';

/** The answer for this URL of the site as JSON bytes: kept, or computed and kept. */
export async function cachedSearch(
  computing: Computing,
  req: Request,
  compute: () => Promise<unknown>,
): Promise<Buffer> {
  const { id } = computing.site;
  const answer = await keep(computing, req, async () => ({
    body: await compute(),
    tags: [`search:${id}`, `site:${id}`],
  }));
  return answer.body;
}
