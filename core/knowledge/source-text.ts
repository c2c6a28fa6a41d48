// A page's or a PDF's document gets its text from its source in the first
// run of its rag_index job: the worker fetches the page or reads the upload
// with the post importers' code (worker/knowledge/extract.ts) and the text is
// written here at once, before the chunks are made and embedded. So a run
// retried after a provider failure indexes the text it already has instead
// of fetching the page again or reading an upload that is gone by then.
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import { KnowledgeError } from './embeddings.ts';
import type { BodyFormat } from './text.ts';

/** The most a document's text may hold, as a text given may (./add.ts). */
export const maxBodyCharacters = 1_000_000;

/** A page's or a PDF's text as taken from it: what the caller gave (a title, a locale) stays as given. */
export type TakenText = {
  title: string;
  body: string;
  format: BodyFormat;
  locale: string;
  /** A page: where it ended up after redirects. */
  sourceUrl: string | null;
};

/**
 * Writes the text on the document if it still waits for it and this job is
 * the one indexing it; false otherwise (removed, or taken over by a later
 * job, which takes the text itself).
 */
export async function saveTakenText(
  db: CommonQueryMethods,
  jobId: string,
  documentId: string,
  taken: TakenText,
): Promise<boolean> {
  if (taken.body.length > maxBodyCharacters)
    throw new KnowledgeError(
      'source_too_long',
      `The text is ${taken.body.length} characters long; a document holds at most ${maxBodyCharacters}.`,
      false,
    );
  const saved = await db.query(sql.typeAlias('void')`
    update knowledge_documents
    set title = ${(taken.title.trim() || 'Untitled').slice(0, 300)}, body = ${taken.body}, body_format = ${taken.format}, locale = ${taken.locale},
        source_url = coalesce(${taken.sourceUrl?.slice(0, 2000) ?? null}, source_url), text_pending = false
    where id = ${documentId} and index_job_id = ${jobId} and text_pending`);
  return saved.rowCount === 1;
}
