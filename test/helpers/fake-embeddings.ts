// The fake embedding model behind the fake providers' /embeddings (and the
// knowledge bench's): deterministic vectors from a text's words.

export const fakeEmbeddingDimensions = 384;

// Words too common to say what a text is about (a real model learns to look past them).
const stopWords = new Set(
  'a an and are as at be by do does for from has have how i in is it its of on or the this to was what when where which who why will with you your'.split(
    ' ',
  ),
);

/**
 * A deterministic embedding: a hashed bag of words (lower case, stop words
 * left out, `synonyms` mapped to one word) in 384 dimensions (or those asked),
 * each word adding ±1 at the dimension its hash picks (the sign from the hash
 * too), so texts sharing words point the same way and unrelated texts are
 * about orthogonal.
 */
export function fakeEmbedding(
  text: string,
  synonyms: Map<string, string> = new Map(),
  dimensions = fakeEmbeddingDimensions,
): number[] {
  const vector = new Array<number>(dimensions).fill(0);
  for (const raw of text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? []) {
    if (stopWords.has(raw)) continue;
    const word = synonyms.get(raw) ?? raw;
    let hash = 2166136261;
    for (const char of word) hash = Math.imul(hash ^ char.codePointAt(0)!, 16777619) >>> 0;
    vector[hash % dimensions]! += hash & 0x80000000 ? -1 : 1;
  }
  return vector;
}
