// What a recrawl changed, in numbers a person can read: paragraphs added,
// removed and changed, words before and after, whether the title changed.
// Paragraphs are matched by a longest common subsequence; within a run of
// differences, a removed paragraph paired with an added one counts as
// changed. Written here rather than with the `diff` package: only these
// counts are needed, not a patch, and the whole of it is the LCS table below.
import type { Block } from './blocks.ts';
import { wordCount } from './blocks.ts';

export type DiffSummary = {
  title_changed: boolean;
  paragraphs: { before: number; after: number; added: number; removed: number; changed: number; unchanged: number };
  words: { before: number; after: number };
};

// Past this many paragraphs a side, the table (n × m cells) would cost more than the answer is worth: compared by position.
const maxMatched = 3000;

/** Pairs of equal indexes on the longest common subsequence of a and b. */
function commonSubsequence(a: string[], b: string[]): [number, number][] {
  const n = a.length;
  const m = b.length;
  const table = new Uint32Array((n + 1) * (m + 1));
  const at = (i: number, j: number) => i * (m + 1) + j;
  for (let i = n - 1; i >= 0; i--)
    for (let j = m - 1; j >= 0; j--)
      table[at(i, j)] =
        a[i] === b[j] ? table[at(i + 1, j + 1)]! + 1 : Math.max(table[at(i + 1, j)]!, table[at(i, j + 1)]!);
  const pairs: [number, number][] = [];
  for (let i = 0, j = 0; i < n && j < m;) {
    if (a[i] === b[j]) pairs.push([i++, j++]);
    else if (table[at(i + 1, j)]! >= table[at(i, j + 1)]!) i++;
    else j++;
  }
  return pairs;
}

export function diffSummary(
  before: { title: string; blocks: Block[] },
  after: { title: string; blocks: Block[] },
): DiffSummary {
  const a = before.blocks.map((block) => block.text);
  const b = after.blocks.map((block) => block.text);
  const pairs =
    a.length <= maxMatched && b.length <= maxMatched
      ? commonSubsequence(a, b)
      : a.flatMap((text, i) => (b[i] === text ? [[i, i] as [number, number]] : []));
  let added = 0;
  let removed = 0;
  let changed = 0;
  // Each gap between matched pairs (and after the last) is a run of differences.
  let [i, j] = [0, 0];
  for (const [nextI, nextJ] of [...pairs, [a.length, b.length] as [number, number]]) {
    const gone = nextI - i;
    const come = nextJ - j;
    changed += Math.min(gone, come);
    removed += gone - Math.min(gone, come);
    added += come - Math.min(gone, come);
    [i, j] = [nextI + 1, nextJ + 1];
  }
  return {
    title_changed: before.title !== after.title,
    paragraphs: { before: a.length, after: b.length, added, removed, changed, unchanged: pairs.length },
    words: { before: wordCount(before.blocks), after: wordCount(after.blocks) },
  };
}
