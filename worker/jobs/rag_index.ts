// Computes a knowledge-base document's index (core/knowledge/indexing.ts):
// chunks for full text, and embeddings when EMBEDDING_PROVIDERS names one (each call recorded), paid
// per 1,000 tokens embedded. A page's or a PDF's document whose text is not
// taken yet has it fetched or read first (../knowledge/extract.ts) and
// written on the document, so a retry does not take it again; a PDF's upload
// is removed once its text is kept, or once the job fails for good. A failure is
// written on the document too (state error, with the code) before the job
// fails or is retried (a retry starts the stages over).
import { KnowledgeError } from '../../core/knowledge/embeddings.ts';
import { documentToIndex, indexDocument, markFailed, ragIndexInput } from '../../core/knowledge/indexing.ts';
import { saveTakenText } from '../../core/knowledge/source-text.ts';
import { describe, JobError } from '../../core/jobs/errors.ts';
import { extractText } from '../knowledge/extract.ts';
import { defineJob } from '../job.ts';

export default defineJob({
  input: ragIndexInput,
  async run(input, context) {
    try {
      const stored = await documentToIndex(context.db, input.document_id);
      let source: Record<string, unknown> | undefined;
      if (stored.text_pending) {
        const extraction = await extractText(stored, input, context);
        if (await saveTakenText(context.db, context.job.id, stored.id, extraction.text)) await extraction.done();
        source = extraction.output;
      }
      const success = await indexDocument(
        {
          db: context.db,
          config: context.config,
          jobId: context.job.id,
          tenantId: context.job.tenant_id,
          signal: context.signal,
          progress: context.progress,
        },
        input,
      );
      return { status: 'succeeded', ...success, output: source ? { ...success.output, source } : success.output };
    } catch (thrown) {
      const error =
        thrown instanceof KnowledgeError
          ? new JobError(thrown.code, thrown.message, { transient: thrown.transient, cause: thrown })
          : describe(thrown);
      // A worker shutting down puts the job back on the queue: the document says so rather than an error of its own.
      const stopped = context.signal.aborted && error.code !== 'canceled';
      // A PDF's upload is for this job alone: once it will not run again (the document removed, the text too
      // long, ...), nothing will read it. (Read and kept, it was removed already.)
      if (input.file_key && !error.transient && !stopped) await context.storage.delete(input.file_key);
      await markFailed(
        context.db,
        input.document_id,
        context.job.id,
        stopped ? 'worker_stopped' : error.code,
        stopped ? 'The worker stopped; the job runs again.' : error.message,
      );
      throw error;
    }
  },
});
