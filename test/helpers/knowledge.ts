// A small knowledge base for the search tests: a few documents of a shop
// (a kettle's manual, warranty terms, delivery, returns), each paragraph
// answering one question, added through HTTP and indexed in chunks of about
// one paragraph by the worker the test runs.
import request from 'supertest';
import type { Site } from '../../core/tenancy/sites.ts';
import type { TestApp } from './app.ts';
import type { Auth } from './identity.ts';

export type CorpusDocument = { title: string; content: string };

export const corpus: CorpusDocument[] = [
  {
    title: 'Kettle manual',
    content: [
      'Fill the kettle with fresh water up to the maximum mark. Never fill the kettle above the mark, or boiling water may spill out of the spout.',
      'Press the switch to boil the water. The kettle turns itself off when the water boils, and the light on the switch goes out.',
      'Descale the kettle every month with white vinegar: fill it halfway, let it stand for an hour, then rinse the kettle twice with fresh water.',
    ].join('\n\n'),
  },
  {
    title: 'Warranty terms',
    content: [
      'The toaster has a one-year warranty covering parts and labour. Damage from dropping the toaster is not covered by the warranty.',
      'The kettle has a two-year warranty covering the heating element, the switch and the lid. The warranty starts on the day of purchase.',
      'Keep your receipt: we ask for it with every warranty claim, and we cannot repair an item under warranty without it.',
    ].join('\n\n'),
  },
  {
    title: 'Delivery',
    content: [
      'Orders ship within two working days from our warehouse. Delivery then takes three to five days, depending on where you live.',
      'Large items such as fridges and washing machines are delivered by a courier, who calls the day before to agree on a time.',
    ].join('\n\n'),
  },
  {
    title: 'Returns',
    content: [
      'You may return any item within thirty days for a full refund, provided it is unused and in its original packaging.',
      'Refunds are paid to the card you paid with, within five working days after the returned item reaches our warehouse.',
    ].join('\n\n'),
  },
];

export type Indexed = { ids: string[]; byTitle: Record<string, string> };

/** Adds the documents for the site and indexes each (chunks of at most 50 tokens, no overlap), waiting for the jobs. */
export async function indexCorpus(
  t: TestApp,
  agentId: string,
  site: Site,
  auth: Auth,
  documents: CorpusDocument[] = corpus,
): Promise<Indexed> {
  const ids: string[] = [];
  for (const document of documents) {
    const added = await request(t.app)
      .post(`/api/agents/${agentId}/knowledge-base/from-text`)
      .set(auth)
      .send({ site_identifier: site.slug, title: document.title, content: document.content, format: 'plain' });
    if (added.status !== 201) throw new Error(`add document: ${added.status} ${JSON.stringify(added.body)}`);
    const job = await request(t.app)
      .post(`/api/agents/knowledge-base/${added.body.id}/compute-rag-index`)
      .set(auth)
      .set('Prefer', 'wait=20')
      .send({ chunk_tokens: 50, overlap_tokens: 0 });
    if (job.body.status !== 'succeeded') throw new Error(`index: ${job.status} ${JSON.stringify(job.body)}`);
    ids.push(added.body.id);
  }
  return { ids, byTitle: Object.fromEntries(documents.map((document, i) => [document.title, ids[i]!])) };
}
