// Splitting a cleaned text into chunks of at most `chunkTokens` tokens, each
// starting with about `overlapTokens` of the previous one, so a passage cut
// at a chunk's end is whole at the next one's start.
//
// Boundaries are taken in order of preference: the end of a paragraph (when
// the chunk is at least half full there), else the end of a sentence, else
// (a sentence longer than a chunk) the end of a word. The overlap is whole
// sentences where they fit, else the last words of the last sentence. Every
// chunk is a slice of the text (`start`, `end`), so it can be shown in place.
import { atoms, countTokens, type CleanText } from './text.ts';

export type ChunkOptions = { chunkTokens: number; overlapTokens: number };

export type Chunk = { ordinal: number; start: number; end: number; tokens: number; content: string };

/** A sentence (or, for a sentence longer than a chunk, a run of its words): the unit chunks are packed from. */
type Segment = { start: number; end: number; tokens: number; endsParagraph: boolean };

// A sentence ends at . ! ? … (and any closing quotes or brackets after them) followed by a space.
const sentenceEnd = /[.!?…]+["'”’»)\]]*\s+/gu;

function sentencesOf(text: string, start: number, end: number): { start: number; end: number }[] {
  const sentences = [];
  let from = start;
  for (const match of text.slice(start, end).matchAll(sentenceEnd)) {
    const stop = start + match.index + match[0].trimEnd().length;
    sentences.push({ start: from, end: stop });
    from = start + match.index + match[0].length;
  }
  if (from < end) sentences.push({ start: from, end });
  return sentences;
}

/** Word runs of at most `limit` tokens covering [start, end). */
function wordRuns(text: string, start: number, end: number, limit: number): Segment[] {
  const runs: Segment[] = [];
  let run: Segment | null = null;
  for (const atom of atoms(text, start, end)) {
    if (!run || run.tokens === limit) {
      if (run) runs.push(run);
      run = { start: atom.start, end: atom.end, tokens: 1, endsParagraph: false };
    } else {
      run.end = atom.end;
      run.tokens++;
    }
  }
  if (run) runs.push(run);
  return runs;
}

/** Sentences, and runs of `runTokens` words of sentences longer than `limit`. */
function segmentsOf({ text, paragraphs }: CleanText, limit: number, runTokens: number): Segment[] {
  const segments: Segment[] = [];
  for (const paragraph of paragraphs) {
    const sentences = sentencesOf(text, paragraph.start, paragraph.end);
    for (const sentence of sentences) {
      const tokens = countTokens(text.slice(sentence.start, sentence.end));
      if (tokens === 0) continue;
      if (tokens <= limit) segments.push({ ...sentence, tokens, endsParagraph: false });
      else segments.push(...wordRuns(text, sentence.start, sentence.end, runTokens));
    }
    const last = segments.at(-1);
    if (last) last.endsParagraph = true;
  }
  return segments;
}

/** The end of `pieces` that the next chunk repeats: whole segments within `limit`, else the last words. */
function overlapOf(text: string, pieces: Segment[], limit: number): Segment[] {
  if (limit === 0) return [];
  const kept: Segment[] = [];
  let tokens = 0;
  for (let i = pieces.length - 1; i >= 0 && tokens + pieces[i]!.tokens <= limit; i--) {
    kept.unshift(pieces[i]!);
    tokens += pieces[i]!.tokens;
  }
  if (kept.length > 0) return kept;
  const last = pieces.at(-1)!;
  const words = [...atoms(text, last.start, last.end)].slice(-limit);
  return words.length ? [{ start: words[0]!.start, end: last.end, tokens: words.length, endsParagraph: false }] : [];
}

export function splitIntoChunks(clean: CleanText, { chunkTokens, overlapTokens }: ChunkOptions): Chunk[] {
  if (overlapTokens * 2 > chunkTokens) throw new RangeError('The overlap must be at most half a chunk.');
  // A sentence cut into runs is cut short enough for the overlap to fit before each run.
  const segments = segmentsOf(clean, chunkTokens, chunkTokens - overlapTokens);
  const chunks: Chunk[] = [];
  let overlap: Segment[] = [];
  let next = 0;
  while (next < segments.length) {
    const pieces = [...overlap];
    let tokens = pieces.reduce((sum, piece) => sum + piece.tokens, 0);
    // Room for at least one new segment: the overlap gives way first.
    while (pieces.length && tokens + segments[next]!.tokens > chunkTokens) tokens -= pieces.shift()!.tokens;
    const fresh = pieces.length;
    while (next < segments.length && tokens + segments[next]!.tokens <= chunkTokens) {
      tokens += segments[next]!.tokens;
      pieces.push(segments[next++]!);
    }
    // Ending mid-paragraph with more to come: end at the chunk's last paragraph end instead, if it is half full there.
    if (next < segments.length && !pieces.at(-1)!.endsParagraph) {
      let held = tokens;
      for (let i = pieces.length - 1; i > fresh; i--) {
        held -= pieces[i]!.tokens;
        if (pieces[i - 1]!.endsParagraph && held * 2 >= chunkTokens) {
          next -= pieces.length - i;
          tokens = held;
          pieces.length = i;
          break;
        }
      }
    }
    const start = pieces[0]!.start;
    const end = pieces.at(-1)!.end;
    chunks.push({ ordinal: chunks.length, start, end, tokens, content: clean.text.slice(start, end) });
    overlap = overlapOf(clean.text, pieces, overlapTokens);
  }
  return chunks;
}
