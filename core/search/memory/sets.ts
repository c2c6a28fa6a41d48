// Sets of documents (a document's number is its place in the index, newest
// first) that the in-memory index combines for and, or and not, in either of
// two forms: a list, the ascending numbers in an Int32Array, for a rare word;
// or a bitmap, bit n & 31 of word n >> 5 of a Uint32Array, for a common one.
// A word in a quarter of 100,000 documents is a list of 25,000 numbers to
// walk, or 3,125 words to AND and count; a word in ten documents is ten
// numbers, or the same 3,125 words. Each operation answers the cheaper form
// its inputs allow.

export type DocSet = Int32Array | Uint32Array;

export const emptySet: DocSet = new Int32Array(0);

export const isBitmap = (set: DocSet): set is Uint32Array => set instanceof Uint32Array;

/** Words of a bitmap of `size` documents. */
const wordsFor = (size: number) => (size + 31) >>> 5;

/** Whether a list of this many documents out of `size` is better held as a bitmap (it takes more bytes as a list). */
export const denser = (members: number, size: number) => members * 32 >= size;

/** The bitmap of a set of documents out of `size`. */
export function bitmapOf(set: DocSet, size: number): Uint32Array {
  if (isBitmap(set)) return set;
  const bits = new Uint32Array(wordsFor(size));
  for (let i = 0; i < set.length; i++) bits[set[i]! >>> 5]! |= 1 << (set[i]! & 31);
  return bits;
}

export function has(set: DocSet, n: number): boolean {
  if (isBitmap(set)) return ((set[n >>> 5]! >>> (n & 31)) & 1) === 1;
  return find(set, n) >= 0;
}

/** Calls `visit` with each member, ascending, until it answers false. */
export function forEachMember(set: DocSet, visit: (n: number) => boolean): void {
  if (!isBitmap(set)) {
    for (let i = 0; i < set.length; i++) if (!visit(set[i]!)) return;
    return;
  }
  for (let word = 0; word < set.length; word++) {
    for (let bits = set[word]!; bits !== 0; bits &= bits - 1) {
      if (!visit((word << 5) | (31 - Math.clz32(bits & -bits)))) return;
    }
  }
}

/** The set bits of a 32-bit word. */
export function popcount(bits: number): number {
  bits -= (bits >>> 1) & 0x55555555;
  bits = (bits & 0x33333333) + ((bits >>> 2) & 0x33333333);
  return Math.imul((bits + (bits >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24;
}

/** Orders the arguments of an `and`: the smallest lists first, bitmaps last. */
export const cheapestFirst = (a: DocSet, b: DocSet) =>
  (isBitmap(a) ? Infinity : a.length) - (isBitmap(b) ? Infinity : b.length) || 0;

export function intersect(a: DocSet, b: DocSet): DocSet {
  if (isBitmap(a) && isBitmap(b)) {
    const out = new Uint32Array(a.length);
    for (let i = 0; i < a.length; i++) out[i] = a[i]! & b[i]!;
    return out;
  }
  if (isBitmap(a)) [a, b] = [b, a];
  const list = a as Int32Array;
  if (isBitmap(b)) return filtered(list, (n) => ((b[n >>> 5]! >>> (n & 31)) & 1) === 1);
  return intersectLists(list, b);
}

function intersectLists(a: Int32Array, b: Int32Array): Int32Array {
  if (a.length > b.length) [a, b] = [b, a];
  const out = new Int32Array(a.length);
  let n = 0;
  let j = 0;
  for (let i = 0; i < a.length && j < b.length; i++) {
    const value = a[i]!;
    // Gallop through the longer list: a rare word against a common one is a few binary searches.
    if (b[j]! < value) {
      let step = 1;
      while (j + step < b.length && b[j + step]! < value) step *= 2;
      let low = j + (step >> 1);
      let high = Math.min(j + step, b.length - 1);
      while (low < high) {
        const middle = (low + high) >> 1;
        if (b[middle]! < value) low = middle + 1;
        else high = middle;
      }
      j = low;
    }
    if (b[j] === value) out[n++] = value;
  }
  return out.subarray(0, n);
}

function filtered(list: Int32Array, keep: (n: number) => boolean): Int32Array {
  const out = new Int32Array(list.length);
  let n = 0;
  for (let i = 0; i < list.length; i++) if (keep(list[i]!)) out[n++] = list[i]!;
  return out.subarray(0, n);
}

export function union(a: DocSet, b: DocSet, size: number): DocSet {
  if (isBitmap(a) || isBitmap(b) || denser(a.length + b.length, size)) {
    const out = bitmapOf(a, size).slice();
    const other = bitmapOf(b, size);
    for (let i = 0; i < out.length; i++) out[i]! |= other[i]!;
    return out;
  }
  const out = new Int32Array(a.length + b.length);
  let n = 0;
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    if (x <= y) i++;
    if (y <= x) j++;
    out[n++] = x <= y ? x : y;
  }
  while (i < a.length) out[n++] = a[i++]!;
  while (j < b.length) out[n++] = b[j++]!;
  return out.subarray(0, n);
}

/** The members of `a` not in `b`. */
export function difference(a: DocSet, b: DocSet, size: number): DocSet {
  if (!isBitmap(a)) return filtered(a, (n) => !has(b, n));
  const other = bitmapOf(b, size);
  const out = new Uint32Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! & ~other[i]!;
  return out;
}

/** Every document of `0 … size - 1` not in `a`. */
export function complement(a: DocSet, size: number): Uint32Array {
  const bits = bitmapOf(a, size);
  const out = new Uint32Array(bits.length);
  for (let i = 0; i < bits.length; i++) out[i] = ~bits[i]!;
  // No bits past the last document.
  if (size & 31) out[out.length - 1]! &= (1 << (size & 31)) - 1;
  return out;
}

/** Index of `value` in the ascending `list`, or -1. */
export function find(list: Int32Array, value: number): number {
  let low = 0;
  let high = list.length - 1;
  while (low <= high) {
    const middle = (low + high) >> 1;
    const at = list[middle]!;
    if (at === value) return middle;
    if (at < value) low = middle + 1;
    else high = middle - 1;
  }
  return -1;
}
