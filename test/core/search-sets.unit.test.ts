// The in-memory index combines documents as lists or bitmaps
// (core/search/memory/sets.ts); whatever forms meet, an operation must
// answer the set a plain Set would.
import {
  bitmapOf,
  complement,
  difference,
  forEachMember,
  has,
  intersect,
  union,
  type DocSet,
} from '../../core/search/memory/sets.ts';

let seed = 11;
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;

/** A random ascending list of documents out of `size`, of about `density` of them. */
const listOf = (size: number, density: number) =>
  Int32Array.from({ length: size }, (_, n) => n).filter(() => random() < density);

const members = (set: DocSet) => {
  const out: number[] = [];
  forEachMember(set, (n) => {
    out.push(n);
    return true;
  });
  return out;
};

describe('document sets', () => {
  it('answer as plain sets do, in every mix of lists and bitmaps', () => {
    for (let round = 0; round < 400; round++) {
      // Sizes around a word's edge, and densities from a few documents to nearly all.
      const size = [0, 1, 31, 32, 33, 64, 100, 1_000, 4_099][round % 9]!;
      const [a, b] = [listOf(size, random() ** 3), listOf(size, random() ** 3)];
      const [setA, setB] = [new Set(a), new Set(b)];
      const all = Array.from({ length: size }, (_, n) => n);
      for (const formA of [a, bitmapOf(a, size)]) {
        expect(members(formA)).toEqual([...a]);
        expect(members(complement(formA, size))).toEqual(all.filter((n) => !setA.has(n)));
        for (const n of [0, size - 1, Math.floor(size / 2)]) if (n >= 0) expect(has(formA, n)).toBe(setA.has(n));
        for (const formB of [b, bitmapOf(b, size)]) {
          expect(members(intersect(formA, formB))).toEqual(all.filter((n) => setA.has(n) && setB.has(n)));
          expect(members(union(formA, formB, size))).toEqual(all.filter((n) => setA.has(n) || setB.has(n)));
          expect(members(difference(formA, formB, size))).toEqual(all.filter((n) => setA.has(n) && !setB.has(n)));
        }
      }
    }
  });

  it('stops visiting when asked', () => {
    const visited: number[] = [];
    forEachMember(bitmapOf(Int32Array.of(3, 40, 41, 90), 100), (n) => {
      visited.push(n);
      return visited.length < 2;
    });
    expect(visited).toEqual([3, 40]);
  });

  it('leaves its inputs as they were', () => {
    const bitmap = bitmapOf(Int32Array.of(1, 2, 3), 64);
    const before = bitmap.slice();
    union(bitmap, Int32Array.of(5), 64);
    intersect(bitmap, bitmapOf(Int32Array.of(2), 64));
    difference(bitmap, Int32Array.of(2), 64);
    complement(bitmap, 64);
    expect(bitmap).toEqual(before);
  });
});
