// A site's inverted lists, packed: every lexeme's documents (ascending: newest
// first), each document's positions of it, and the documents holding it in a
// title or summary, laid end to end in a few typed arrays, a lexeme being a
// number and a range. A list per lexeme as objects would put a few hundred
// bytes of the process's heap behind every rare word; here the heap holds only
// the lexicon, and the lists sit outside it.
import { find } from './sets.ts';
import { forEachLexeme, inTitleOrSummary } from './tsvector.ts';

export class Postings {
  readonly #lexicon: Map<string, number>;
  /** Lexeme l's documents are docs[docStart[l] … docStart[l + 1]); so are its postings' numbers. */
  readonly #docStart: Int32Array;
  readonly #docs: Int32Array;
  /** Posting p's positions are positions[positionStart[p] … positionStart[p + 1]). */
  readonly #positionStart: Int32Array;
  readonly #positions: Uint16Array;
  /** Lexeme l's title and summary documents are heads[headStart[l] … headStart[l + 1]). */
  readonly #headStart: Int32Array;
  readonly #heads: Int32Array;

  constructor(parts: {
    lexicon: Map<string, number>;
    docStart: Int32Array;
    docs: Int32Array;
    positionStart: Int32Array;
    positions: Uint16Array;
    headStart: Int32Array;
    heads: Int32Array;
  }) {
    this.#lexicon = parts.lexicon;
    this.#docStart = parts.docStart;
    this.#docs = parts.docs;
    this.#positionStart = parts.positionStart;
    this.#positions = parts.positions;
    this.#headStart = parts.headStart;
    this.#heads = parts.heads;
  }

  get bytes(): number {
    const arrays = [this.#docStart, this.#docs, this.#positionStart, this.#positions, this.#headStart, this.#heads];
    return arrays.reduce((sum, array) => sum + array.byteLength, 0) + this.#lexicon.size * 100;
  }

  /** The documents holding the lexeme, newest first. */
  docsOf(lexeme: string): Int32Array | undefined {
    const l = this.#lexicon.get(lexeme);
    return l === undefined ? undefined : this.#docs.subarray(this.#docStart[l], this.#docStart[l + 1]);
  }

  /** The documents holding the lexeme in their title or summary, newest first. */
  headsOf(lexeme: string): Int32Array | undefined {
    const l = this.#lexicon.get(lexeme);
    return l === undefined ? undefined : this.#heads.subarray(this.#headStart[l], this.#headStart[l + 1]);
  }

  /** The lexeme's packed positions in document n, if it holds it. */
  positionsOf(lexeme: string, n: number): Uint16Array | undefined {
    const l = this.#lexicon.get(lexeme);
    if (l === undefined) return undefined;
    const from = this.#docStart[l]!;
    const at = find(this.#docs.subarray(from, this.#docStart[l + 1]), n);
    if (at < 0) return undefined;
    return this.#positions.subarray(this.#positionStart[from + at], this.#positionStart[from + at + 1]);
  }
}

/**
 * Takes documents in order (their numbers ascending), kept as they come —
 * for each, its lexemes' numbers and positions — and lays them out by lexeme
 * at the end, a counting sort. Everything grows outside the heap.
 */
export class PostingsBuilder {
  readonly #lexicon = new Map<string, number>();
  #postingsOf = new Int32Array(1024);
  #headsOf = new Int32Array(1024);
  /** Per posting in arrival order: its lexeme, its document, how many positions. */
  #lexemes = new Int32Array(1 << 16);
  #docs = new Int32Array(1 << 16);
  #counts = new Uint16Array(1 << 16);
  #heads = new Uint8Array(1 << 16);
  #postings = 0;
  #positions = new Uint16Array(1 << 17);
  #positionCount = 0;

  add(doc: number, vector: string): void {
    forEachLexeme(vector, (lexeme, positions, count) => {
      let l = this.#lexicon.get(lexeme);
      if (l === undefined) {
        l = this.#lexicon.size;
        this.#lexicon.set(lexeme, l);
        if (l === this.#postingsOf.length) {
          this.#postingsOf = grown(this.#postingsOf, l + 1);
          this.#headsOf = grown(this.#headsOf, l + 1);
        }
      }
      const p = this.#postings++;
      if (p === this.#lexemes.length) {
        this.#lexemes = grown(this.#lexemes, p + 1);
        this.#docs = grown(this.#docs, p + 1);
        this.#counts = grown(this.#counts, p + 1);
        this.#heads = grown(this.#heads, p + 1);
      }
      if (this.#positionCount + count > this.#positions.length) {
        this.#positions = grown(this.#positions, this.#positionCount + count);
      }
      let head = 0;
      for (let i = 0; i < count; i++) {
        const packed = positions[i]!;
        this.#positions[this.#positionCount + i] = packed;
        if (inTitleOrSummary(packed)) head = 1;
      }
      this.#positionCount += count;
      this.#lexemes[p] = l;
      this.#docs[p] = doc;
      this.#counts[p] = count;
      this.#heads[p] = head;
      this.#postingsOf[l]!++;
      this.#headsOf[l]! += head;
    });
  }

  /** The lists laid out, a slice at a time: a large site's are seconds of work the process's requests share. */
  async finish(): Promise<Postings> {
    const lexemes = this.#lexicon.size;
    const postings = this.#postings;
    const docStart = new Int32Array(lexemes + 1);
    const headStart = new Int32Array(lexemes + 1);
    const positionsOf = new Float64Array(lexemes + 1);
    for (let p = 0; p < postings; p++) {
      positionsOf[this.#lexemes[p]! + 1]! += this.#counts[p]!;
      if (p % slice === slice - 1) await turn();
    }
    for (let l = 0; l < lexemes; l++) {
      docStart[l + 1] = docStart[l]! + this.#postingsOf[l]!;
      headStart[l + 1] = headStart[l]! + this.#headsOf[l]!;
      positionsOf[l + 1]! += positionsOf[l]!;
    }
    // Where the next posting, position and head of each lexeme go.
    const nextPosting = docStart.slice(0, lexemes);
    const nextHead = headStart.slice(0, lexemes);
    const nextPosition = Int32Array.from(positionsOf.subarray(0, lexemes));
    const docs = new Int32Array(postings);
    const positionStart = new Int32Array(postings + 1);
    const positions = new Uint16Array(this.#positionCount);
    const heads = new Int32Array(headStart[lexemes]!);
    let from = 0;
    for (let p = 0; p < postings; p++) {
      const l = this.#lexemes[p]!;
      const count = this.#counts[p]!;
      const slot = nextPosting[l]!++;
      docs[slot] = this.#docs[p]!;
      positionStart[slot] = nextPosition[l]!;
      let to = nextPosition[l]!;
      for (let i = 0; i < count; i++) positions[to++] = this.#positions[from++]!;
      nextPosition[l] = to;
      if (this.#heads[p]) heads[nextHead[l]!++] = this.#docs[p]!;
      if (p % slice === slice - 1) await turn();
    }
    // A lexeme's last posting ends where the next lexeme's positions begin.
    positionStart[postings] = this.#positionCount;
    return new Postings({ lexicon: this.#lexicon, docStart, docs, positionStart, positions, headStart, heads });
  }
}

/** Postings laid out between two turns of the event loop (a few milliseconds). */
const slice = 100_000;
const turn = () => new Promise(setImmediate);

function grown<T extends Int32Array | Uint16Array | Uint8Array>(array: T, atLeast: number): T {
  const larger = new (array.constructor as new (length: number) => T)(Math.max(atLeast, array.length * 2));
  larger.set(array);
  return larger;
}
