// The search thread (core/search/memory/engine.ts): copies are built, ranked
// and dropped there; when the thread ends, every question waiting on it fails
// at once (the search then asks PostgreSQL), its owner hears of it, and the
// next question starts a new thread.
import { Worker } from 'node:worker_threads';
import { createLogger } from '../../core/logger.ts';
import { SearchEngine } from '../../core/search/memory/engine.ts';
import type { IndexedDocument } from '../../core/search/memory/site-index.ts';

const logger = createLogger('silent');
const doc = (n: number): IndexedDocument => ({
  kind: 'post',
  itemId: `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`,
  locale: 'en',
  published: 1_700_000_000_000_000 - n * 60_000_000,
  version: n,
});

describe('the search thread', () => {
  it('builds a copy from batches, ranks in it, and forgets it when dropped', async () => {
    const engine = new SearchEngine(logger, () => {
      throw new Error('not lost');
    });
    try {
      const copy = engine.newCopy();
      engine.tell({ op: 'add', copy, docs: [doc(1), doc(2)], vectors: ["'storm':1A 'coast':2", "'storm':3"] });
      engine.tell({ op: 'add', copy, docs: [doc(3)], vectors: ["'coast':1"] });
      expect(await engine.ask({ op: 'finish', copy })).toMatchObject({ size: 3, changes: 0 });
      const options = { newest: 60, atMicros: 1_700_000_000_000_000, after: undefined, pageSize: 11 };
      const ranked = await engine.ask({
        op: 'rank',
        copy,
        query: { op: 'word', lexeme: 'storm' },
        scope: { locale: undefined, kinds: ['post'] },
        options,
      });
      expect(ranked.facets).toEqual({ post: 2 });
      // A title hit (weight A) above a body hit.
      expect(ranked.hits.map((hit) => hit.doc.version)).toEqual([1, 2]);
      expect(
        await engine.ask({ op: 'apply', copy, removed: [{ kind: 'post', itemId: doc(1).itemId }], written: [] }),
      ).toMatchObject({ size: 2, changes: 1 });
      engine.tell({ op: 'drop', copy });
      await expect(
        engine.ask({
          op: 'rank',
          copy,
          query: { op: 'word', lexeme: 'storm' },
          scope: { locale: undefined, kinds: ['post'] },
          options,
        }),
      ).rejects.toThrow(`no copy ${copy}`);
    } finally {
      await engine.close();
    }
  });

  it('fails what waits on a thread that ended, tells its owner, and starts a new one for the next question', async () => {
    const lost: string[] = [];
    let threads = 0;
    const engine = new SearchEngine(
      logger,
      (error) => lost.push(error.message),
      () => {
        threads++;
        // A thread that ends as soon as it is asked anything, then one that answers.
        return threads === 1
          ? new Worker("require('node:worker_threads').parentPort.on('message', () => process.exit(3))", { eval: true })
          : new Worker(new URL('../../core/search/memory/engine-thread.ts', import.meta.url));
      },
    );
    try {
      await expect(engine.ask({ op: 'heap' })).rejects.toThrow('the search thread exited with code 3');
      expect(lost).toEqual(['the search thread exited with code 3']);
      expect(await engine.ask({ op: 'heap' })).toEqual({ limit: expect.any(Number), used: expect.any(Number) });
      expect(threads).toBe(2);
    } finally {
      await engine.close();
    }
    // Closed: a thread that ends then is no loss to report, and questions are refused as rejections.
    expect(lost).toHaveLength(1);
    const asking = engine.ask({ op: 'heap' });
    await expect(asking).rejects.toThrow('the search thread is closed');
  });
});
