// Computes a knowledge-base document's index (core/knowledge/indexing.ts):
// chunks for full text, and embeddings when EMBEDDING_PROVIDERS names one (each call recorded), paid
// per 1,000 tokens embedded. A failure is written on the document too (state
// error, with the code) before the job fails or is retried (a retry starts
// the stages over).
import { KnowledgeError } from '../../core/knowledge/embeddings.ts';
import { indexDocument, markFailed, ragIndexInput } from '../../core/knowledge/indexing.ts';
import { describe, JobError } from '../../core/jobs/errors.ts';
import { defineJob } from './handler.ts';

export default defineJob({
  input: ragIndexInput,
  async run(input, context) {
    try {
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
      return { status: 'succeeded', ...success };
    } catch (thrown) {
      const error =
        thrown instanceof KnowledgeError
          ? new JobError(thrown.code, thrown.message, { transient: thrown.transient, cause: thrown })
          : describe(thrown);
      // A worker shutting down puts the job back on the queue: the document says so rather than an error of its own.
      const stopped = context.signal.aborted && error.code !== 'canceled';
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
