// The search thread (./engine.ts): the copies themselves (./site-index.ts),
// built from the batches the API's thread reads, caught up with the rows it
// reads since, and searched. Each message names its copy by number.
import { getHeapStatistics } from 'node:v8';
import { parentPort } from 'node:worker_threads';
import type { Answers, Asked, Reply, Told } from './engine.ts';
import { rankedPage } from './page.ts';
import { SiteIndex, SiteIndexBuilder } from './site-index.ts';

/** Copies being built; a batch that failed fails the copy's finish. */
const building = new Map<number, { builder: SiteIndexBuilder; failed?: Error }>();
const copies = new Map<number, SiteIndex>();

const counts = (index: SiteIndex) => ({ size: index.size, changes: index.changes, bytes: index.bytes });

function copyOf(copy: number): SiteIndex {
  const index = copies.get(copy);
  if (!index) throw new Error(`no copy ${copy} in the search thread`);
  return index;
}

function told(message: Told): void {
  if (message.op === 'drop') {
    copies.delete(message.copy);
    building.delete(message.copy);
    return;
  }
  let entry = building.get(message.copy);
  if (!entry) building.set(message.copy, (entry = { builder: new SiteIndexBuilder() }));
  if (entry.failed) return;
  try {
    message.docs.forEach((doc, n) => entry.builder.add(doc, message.vectors[n]!));
  } catch (error) {
    entry.failed = error as Error;
  }
}

async function asked(message: Asked): Promise<Answers[Asked['op']]> {
  switch (message.op) {
    case 'finish': {
      const entry = building.get(message.copy);
      building.delete(message.copy);
      if (entry?.failed) throw entry.failed;
      const index = await (entry?.builder ?? new SiteIndexBuilder()).finish();
      copies.set(message.copy, index);
      return counts(index);
    }
    case 'apply': {
      const index = copyOf(message.copy);
      // Removals first: a document removed and written again since is in both.
      for (const { kind, itemId } of message.removed) index.remove(kind, itemId);
      for (const { doc, vector } of message.written) index.put(doc, vector);
      return counts(index);
    }
    case 'rank':
      return rankedPage(copyOf(message.copy), message.query, message.scope, message.options);
    case 'heap': {
      const { heap_size_limit: limit, used_heap_size: used } = getHeapStatistics();
      return { limit, used };
    }
  }
}

parentPort!.on('message', (message: (Asked & { id: number }) | Told) => {
  if (!('id' in message)) return told(message);
  asked(message).then(
    (value) => parentPort!.postMessage({ id: message.id, value } satisfies Reply),
    (error: unknown) => parentPort!.postMessage({ id: message.id, error: (error as Error).message } satisfies Reply),
  );
});
