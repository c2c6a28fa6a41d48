// A site's copy held in memory as the API's thread sees it: the index itself
// lives in the search thread (./engine.ts), and here are what a search reads
// on this side — the site's common words read as queries (./query-tree.ts)
// and the hits' texts kept from earlier searches (./hit-text-cache.ts) — with
// the counts the search thread last gave.
import type { CopyCounts, PageOptions, Ranked, SearchEngine } from './engine.ts';
import { HitTextCache, type HitText } from './hit-text-cache.ts';
import { documentKey, type IndexedDocument, type Scope } from './site-index.ts';
import type { QueryNode } from './tsquery.ts';

/** Bytes of hits' texts kept per site (./hit-text-cache.ts). */
const textBytes = 32 * 1024 * 1024;
/** Documents sent to the search thread at a time while a site is read. */
const batch = 500;

const wordKey = (locale: string, word: string) => `${locale} ${word}`;

export class SiteCopy {
  readonly #engine: SearchEngine;
  readonly #copy: number;
  /** The site's common words read as a query (tsquery text) in each locale, by `locale word`. */
  readonly #words: Map<string, string>;
  readonly #texts = new HitTextCache(textBytes);
  #counts: CopyCounts;

  constructor(engine: SearchEngine, copy: number, counts: CopyCounts, words: Map<string, string>) {
    this.#engine = engine;
    this.#copy = copy;
    this.#counts = counts;
    this.#words = words;
  }

  /** Documents searchable now. */
  get size(): number {
    return this.#counts.size;
  }

  /** Documents written since the copy was read. */
  get changes(): number {
    return this.#counts.changes;
  }

  /** About what the copy takes in memory, on both threads. */
  get bytes(): number {
    return this.#counts.bytes + this.#texts.bytes + this.#words.size * 150;
  }

  /** A word of the site read as a query in the locale (websearch_to_tsquery's text), when read with the site. */
  wordQuery(locale: string, word: string): string | undefined {
    return this.#words.get(wordKey(locale, word));
  }

  /** The text of the document's version held here, when kept. */
  text(doc: IndexedDocument): HitText | undefined {
    return this.#texts.get(documentKey(doc.kind, doc.itemId), doc.version);
  }

  /** Keeps a text read for the document, if it is of the version held here (a replica may be behind or ahead). */
  keepText(doc: IndexedDocument, text: HitText): void {
    if (text.version === doc.version) this.#texts.set(documentKey(doc.kind, doc.itemId), text);
  }

  /** The rows removed and written since the copy's snapshot, applied to it. */
  async apply(
    removed: { kind: string; itemId: string }[],
    written: { doc: IndexedDocument; vector: string }[],
  ): Promise<void> {
    for (const { kind, itemId } of removed) this.#texts.delete(documentKey(kind, itemId));
    this.#counts = await this.#engine.ask({ op: 'apply', copy: this.#copy, removed, written });
  }

  /** The counts per kind and a page of the query's matches, ranked (./page.ts). */
  rank(query: QueryNode, scope: Scope, options: PageOptions): Promise<Ranked> {
    return this.#engine.ask({ op: 'rank', copy: this.#copy, query, scope, options });
  }

  /** Gives the copy's memory back. */
  drop(): void {
    this.#engine.tell({ op: 'drop', copy: this.#copy });
  }
}

/** Sends a site's documents, given newest first, to the search thread to build its copy. */
export class SiteCopyBuilder {
  readonly #engine: SearchEngine;
  readonly #copy: number;
  #docs: IndexedDocument[] = [];
  #vectors: string[] = [];
  readonly #words = new Map<string, string>();

  constructor(engine: SearchEngine) {
    this.#engine = engine;
    this.#copy = engine.newCopy();
  }

  add(doc: IndexedDocument, vector: string): void {
    this.#docs.push(doc);
    this.#vectors.push(vector);
    if (this.#docs.length >= batch) this.#send();
  }

  addWord(locale: string, word: string, query: string): void {
    this.#words.set(wordKey(locale, word), query);
  }

  async finish(): Promise<SiteCopy> {
    this.#send();
    const counts = await this.#engine.ask({ op: 'finish', copy: this.#copy });
    return new SiteCopy(this.#engine, this.#copy, counts, this.#words);
  }

  /** A reading that failed: what was sent is given back. */
  abandon(): void {
    this.#engine.tell({ op: 'drop', copy: this.#copy });
  }

  #send(): void {
    if (this.#docs.length === 0) return;
    this.#engine.tell({ op: 'add', copy: this.#copy, docs: this.#docs, vectors: this.#vectors });
    this.#docs = [];
    this.#vectors = [];
  }
}
