// One site's search documents held in memory: for each lexeme, the documents
// holding it newest first with its positions in each, and apart the
// documents holding it in their title or summary. The newest matches of a
// common word are then the head of a list rather than a scan of an index
// (docs/search.md), and every match is counted exactly.
//
// What was loaded stays as built (the base); a document written since is
// kept apart (the changes), its base entry marked gone. A search combines
// both. When the changes grow, the owner loads the site afresh
// (./indexes.ts).
import { takeOldest } from '../../cache-eviction.ts';
import { searchKinds, type SearchKind } from '../kinds.ts';
import { holds, type QueryNode } from './tsquery.ts';
import { Postings, PostingsBuilder } from './postings.ts';
import {
  bitmapOf,
  cheapestFirst,
  complement,
  denser,
  difference,
  emptySet,
  forEachMember,
  has,
  intersect,
  isBitmap,
  popcount,
  union,
  type DocSet,
} from './sets.ts';
import { forEachLexeme, inTitleOrSummary } from './tsvector.ts';

export type IndexedDocument = {
  kind: SearchKind;
  itemId: string;
  locale: string;
  /** Microseconds since 1970; Infinity for an item never published (it sorts as newest, as in PostgreSQL). */
  published: number;
  /** The transaction that last wrote it (search_documents.changed, 0037): which version of its text is this one's. */
  version: number;
};

/** Bytes of common words' bitmaps kept per site (1,300 of them for 100,000 documents), made as they are searched. */
const bitmapBytes = 16 * 1024 * 1024;

/** A document written since the base was built: its lexemes with their packed positions. */
type Changed = { doc: IndexedDocument; lexemes: Map<string, Uint16Array> };

/** A match that may be ranked: a base document (its number) or a changed one; `matching` false for a title match alone. */
type Candidate = { doc: IndexedDocument; n: number; changed: Changed | undefined; matching: boolean };

/** The `count` newest of two lists, each newest first. */
function newestOf(a: Candidate[], b: Candidate[], count: number): Candidate[] {
  return [...a, ...b].sort((x, y) => y.doc.published - x.doc.published).slice(0, count);
}

/** A document's key across the index, the copy and the texts read for it. */
export const documentKey = (kind: string, itemId: string) => `${kind} ${itemId}`;
const inHead = (positions: ArrayLike<number>) => {
  for (let i = 0; i < positions.length; i++) if (inTitleOrSummary(positions[i]!)) return true;
  return false;
};

/** Where a search looks: one locale or all, and the kinds whose matches are ranked. */
export type Scope = { locale: string | undefined; kinds: readonly SearchKind[] };

/** A match to rank, with the positions of each of the query's lexemes in it. */
export type Match = { doc: IndexedDocument; positions: (Uint16Array | undefined)[] };

export class SiteIndex {
  readonly #docs: IndexedDocument[];
  readonly #byKey: Map<string, number>;
  readonly #postings: Postings;
  /** The base documents neither deleted nor written again since, as a bitmap (./sets.ts). */
  readonly #live: Uint32Array;
  /** Each base document's kind (its index in searchKinds) and locale (its index in the site's locales here). */
  readonly #kinds: Uint8Array;
  readonly #locales: Uint16Array;
  readonly #localeCodes = new Map<string, number>();
  /** The base documents of each kind, and of each locale, as bitmaps: for counting a common word's matches. */
  readonly #kindBitmaps: (Uint32Array | undefined)[];
  readonly #localeBitmaps: Uint32Array[];
  /** Common words' documents as bitmaps, the least recently searched first. */
  readonly #bitmaps = new Map<string, Uint32Array>();
  #bitmapBytes = 0;
  #goneCount = 0;
  readonly #changed = new Map<string, Changed>();
  readonly #baseBytes: number;

  constructor(docs: IndexedDocument[], postings: Postings) {
    this.#docs = docs;
    this.#postings = postings;
    const size = docs.length;
    this.#live = complement(emptySet, size);
    this.#kinds = Uint8Array.from(docs, (doc) => searchKinds.indexOf(doc.kind));
    this.#locales = Uint16Array.from(docs, (doc) => {
      if (!this.#localeCodes.has(doc.locale)) this.#localeCodes.set(doc.locale, this.#localeCodes.size);
      return this.#localeCodes.get(doc.locale)!;
    });
    const membersOf = (codes: Uint8Array | Uint16Array, code: number) =>
      Int32Array.from(codes.keys()).filter((n) => codes[n] === code);
    this.#kindBitmaps = searchKinds.map((_, code) =>
      this.#kinds.includes(code) ? bitmapOf(membersOf(this.#kinds, code), size) : undefined,
    );
    this.#localeBitmaps = [...this.#localeCodes.values()].map((code) => bitmapOf(membersOf(this.#locales, code), size));
    this.#byKey = new Map(docs.map((doc, n) => [documentKey(doc.kind, doc.itemId), n]));
    this.#baseBytes = postings.bytes + docs.length * 300;
  }

  /** Documents searchable now. */
  get size(): number {
    return this.#docs.length - this.#goneCount + this.#changed.size;
  }

  /** Documents written since the base was built. */
  get changes(): number {
    return this.#changed.size + this.#goneCount;
  }

  /** About what the index takes in memory. */
  get bytes(): number {
    let changed = 0;
    for (const { lexemes } of this.#changed.values())
      for (const positions of lexemes.values()) changed += 40 + positions.byteLength;
    return this.#baseBytes + changed + this.#bitmapBytes;
  }

  remove(kind: string, itemId: string): void {
    const key = documentKey(kind, itemId);
    this.#changed.delete(key);
    const n = this.#byKey.get(key);
    if (n !== undefined && has(this.#live, n)) {
      this.#live[n >>> 5]! &= ~(1 << (n & 31));
      this.#goneCount++;
    }
  }

  /** A document written since the base was built, from its vector's text form. */
  put(doc: IndexedDocument, vector: string): void {
    this.remove(doc.kind, doc.itemId);
    const lexemes = new Map<string, Uint16Array>();
    forEachLexeme(vector, (lexeme, positions, count) => lexemes.set(lexeme, positions.slice(0, count)));
    this.#changed.set(documentKey(doc.kind, doc.itemId), { doc, lexemes });
  }

  /**
   * The matches of the query in scope: how many of each kind (whatever kinds
   * the scope asks), and the `newest` newest of the kinds asked — with, when
   * there are that many, the `newest / 2` newest matching in their titles or
   * summaries — as PostgreSQL's search_candidates picks them (0023, 0029).
   */
  matches(query: QueryNode, scope: Scope, newest: number, lexemes: readonly string[]) {
    const locale = scope.locale === undefined ? -1 : (this.#localeCodes.get(scope.locale) ?? -2);
    const kindMask = scope.kinds.reduce((mask, kind) => mask | (1 << searchKinds.indexOf(kind)), 0);
    const docKinds = this.#kinds;
    const inScope = (n: number) => this.#inScope(n, locale);

    const base = this.#evaluate(query, this.#docsOf);
    const counts = this.#count(base, locale);
    const baseFound: Candidate[] = [];
    forEachMember(base, (n) => {
      if (inScope(n) && kindMask & (1 << docKinds[n]!)) baseFound.push(this.#candidate(n));
      return baseFound.length < newest;
    });
    const changedFound: Candidate[] = [];
    const changedHeads: Candidate[] = [];
    const inKinds = (doc: IndexedDocument) => (kindMask & (1 << searchKinds.indexOf(doc.kind))) !== 0;
    for (const changed of this.#changed.values()) {
      const { doc, lexemes: held } = changed;
      if (scope.locale !== undefined && doc.locale !== scope.locale) continue;
      const matching = holds(query, (lexeme) => held.has(lexeme));
      if (matching) counts[searchKinds.indexOf(doc.kind)]!++;
      if (!inKinds(doc)) continue;
      if (matching) changedFound.push({ doc, n: -1, changed, matching });
      if (holds(query, (lexeme) => inHead(held.get(lexeme) ?? [])))
        changedHeads.push({ doc, n: -1, changed, matching });
    }
    const found = newestOf(baseFound, changedFound, newest);
    const picked = new Map(found.map((candidate) => [candidate.doc, candidate]));
    if (found.length >= newest) {
      const heads: Candidate[] = [];
      forEachMember(
        this.#evaluate(query, (lexeme) => this.#postings.headsOf(lexeme)),
        (n) => {
          if (inScope(n) && kindMask & (1 << docKinds[n]!))
            heads.push({ ...this.#candidate(n), matching: has(base, n) });
          return heads.length < newest / 2;
        },
      );
      // As search_page ranks only what matches the whole document: with a `not`, a title match may not.
      for (const head of newestOf(heads, changedHeads, newest / 2)) if (head.matching) picked.set(head.doc, head);
    }
    const facets: Partial<Record<SearchKind, number>> = {};
    searchKinds.forEach((kind, code) => {
      if (counts[code]) facets[kind] = counts[code];
    });
    const toRank: Match[] = [...picked.values()].map((candidate) => ({
      doc: candidate.doc,
      positions: this.#positions(candidate, lexemes),
    }));
    return { facets, toRank };
  }

  /** The documents of the base holding the lexeme; a common one's as a bitmap, made once and kept while there is room. */
  #docsOf = (lexeme: string): DocSet | undefined => {
    const list = this.#postings.docsOf(lexeme);
    if (!list || !denser(list.length, this.#docs.length)) return list;
    let bitmap = this.#bitmaps.get(lexeme);
    if (bitmap) this.#bitmaps.delete(lexeme);
    else {
      bitmap = bitmapOf(list, this.#docs.length);
      while (this.#bitmaps.size && this.#bitmapBytes + bitmap.byteLength > bitmapBytes)
        this.#bitmapBytes -= takeOldest(this.#bitmaps)![1].byteLength;
      this.#bitmapBytes += bitmap.byteLength;
    }
    this.#bitmaps.set(lexeme, bitmap);
    return bitmap;
  };

  /** How many base documents of each kind in scope (live, of the locale when one is asked: -1 any, -2 none) the set holds. */
  #count(set: DocSet, locale: number): Int32Array {
    const counts = new Int32Array(searchKinds.length);
    if (locale === -2) return counts;
    if (!isBitmap(set)) {
      for (let i = 0; i < set.length; i++) if (this.#inScope(set[i]!, locale)) counts[this.#kinds[set[i]!]!]!++;
      return counts;
    }
    const live = this.#live;
    const inLocale = locale === -1 ? undefined : this.#localeBitmaps[locale]!;
    const kinds = this.#kindBitmaps;
    for (let i = 0; i < set.length; i++) {
      let bits = set[i]! & live[i]!;
      if (inLocale) bits &= inLocale[i]!;
      if (bits === 0) continue;
      for (let kind = 0; kind < kinds.length; kind++) {
        const ofKind = kinds[kind];
        if (ofKind) counts[kind]! += popcount(bits & ofKind[i]!);
      }
    }
    return counts;
  }

  /** Whether base document n is live and in the locale (-1 any). */
  #inScope(n: number, locale: number): boolean {
    return ((this.#live[n >>> 5]! >>> (n & 31)) & 1) === 1 && (locale === -1 || this.#locales[n] === locale);
  }

  #candidate(n: number): Candidate {
    return { doc: this.#docs[n]!, n, changed: undefined, matching: true };
  }

  /** The packed positions of each lexeme in the document. */
  #positions(candidate: Candidate, lexemes: readonly string[]): (Uint16Array | undefined)[] {
    const { changed, n } = candidate;
    if (changed) return lexemes.map((lexeme) => changed.lexemes.get(lexeme));
    return lexemes.map((lexeme) => this.#postings.positionsOf(lexeme, n));
  }

  /** The base documents matching the query, newest first, from the sets `setOf` picks (gone ones included). */
  #evaluate(node: QueryNode, setOf: (lexeme: string) => DocSet | undefined): DocSet {
    const size = this.#docs.length;
    switch (node.op) {
      case 'word':
        return setOf(node.lexeme) ?? emptySet;
      case 'not':
        return complement(this.#evaluate(node.arg, setOf), size);
      case 'or':
        return node.args.map((arg) => this.#evaluate(arg, setOf)).reduce((a, b) => union(a, b, size));
      case 'and': {
        const positive = node.args.filter((arg) => arg.op !== 'not').map((arg) => this.#evaluate(arg, setOf));
        const negative = node.args.flatMap((arg) => (arg.op === 'not' ? [this.#evaluate(arg.arg, setOf)] : []));
        const excluded = negative.length ? negative.reduce((a, b) => union(a, b, size)) : undefined;
        if (positive.length === 0) return complement(excluded!, size);
        const matched = positive.sort(cheapestFirst).reduce(intersect);
        return excluded ? difference(matched, excluded, size) : matched;
      }
    }
  }
}

/** Builds a site's index from its documents, given newest first. */
export class SiteIndexBuilder {
  readonly #docs: IndexedDocument[] = [];
  readonly #postings = new PostingsBuilder();
  #last = Infinity;

  add(doc: IndexedDocument, vector: string): void {
    if (doc.published > this.#last) throw new Error('documents must be added newest first');
    this.#last = doc.published;
    this.#postings.add(this.#docs.length, vector);
    this.#docs.push(doc);
  }

  async finish(): Promise<SiteIndex> {
    return new SiteIndex(this.#docs, await this.#postings.finish());
  }
}
