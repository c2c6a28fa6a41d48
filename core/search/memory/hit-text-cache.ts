// What hits show of their documents (title, path, the text snippets are cut
// from), kept for the next searches that show them: the newest documents are
// most of the hits of common words, and a text read from PostgreSQL costs a
// round trip. Kept as UTF-8 outside the heap, up to a number of bytes, the
// least recently shown out first; a text is used only for the version of its
// document it was read from.
import { takeOldest } from '../../cache-eviction.ts';

export type HitText = {
  locale: string;
  title: string;
  path: string | null;
  published_at: string | null;
  text: string;
  /** The transaction that wrote the row it was read from (search_documents.changed). */
  version: number;
};

type Kept = Omit<HitText, 'text'> & { body: Buffer };

const overhead = 200;

export class HitTextCache {
  readonly #maxBytes: number;
  readonly #kept = new Map<string, Kept>();
  #bytes = 0;

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes;
  }

  get bytes(): number {
    return this.#bytes;
  }

  get(key: string, version: number): HitText | undefined {
    const kept = this.#kept.get(key);
    if (kept?.version !== version) return undefined;
    this.#kept.delete(key);
    this.#kept.set(key, kept);
    const { body, ...text } = kept;
    return { ...text, text: body.toString('utf8') };
  }

  set(key: string, { text, ...rest }: HitText): void {
    this.delete(key);
    const kept = { ...rest, body: Buffer.from(text, 'utf8') };
    this.#kept.set(key, kept);
    this.#bytes += sizeOf(kept);
    while (this.#bytes > this.#maxBytes) this.#bytes -= sizeOf(takeOldest(this.#kept)![1]);
  }

  delete(key: string): void {
    const kept = this.#kept.get(key);
    if (!kept) return;
    this.#kept.delete(key);
    this.#bytes -= sizeOf(kept);
  }
}

const sizeOf = (kept: Kept) => overhead + kept.body.length + 2 * (kept.title.length + (kept.path?.length ?? 0));
