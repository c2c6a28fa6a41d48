// PostgreSQL's text form of a tsvector ('word':1A,5 'other':3), read into
// what the in-memory index keeps: each lexeme with its positions, a position
// packed as PostgreSQL packs it (WordEntryPos: the weight in the top two bits,
// A = 3 … D = 0, the position in the low fourteen).

/** The weight of a packed position: 3 for A, 2 for B, 1 for C, 0 for D. */
export const weightOf = (packed: number) => packed >>> 14;
/** Whether a packed position is in a title (A) or summary (B), as the head vector holds them (0023). */
export const inTitleOrSummary = (packed: number) => weightOf(packed) >= 2;
/** The position (1–16383) of a packed position. */
export const positionOf = (packed: number) => packed & 0x3fff;

/**
 * Calls `each` for every lexeme of the vector in its order, with its packed
 * positions in `positions[0..count)` (a buffer reused between calls: copy
 * what you keep). Lexemes are quoted, with ' and \ doubled.
 */
export function forEachLexeme(
  text: string,
  each: (lexeme: string, positions: Uint16Array, count: number) => void,
  positions = new Uint16Array(256),
): void {
  let at = 0;
  const end = text.length;
  while (at < end) {
    if (text.charCodeAt(at) === 32) {
      at++;
      continue;
    }
    if (text.charCodeAt(at) !== 39) throw new Error(`not a tsvector at ${at}: ${text.slice(at, at + 20)}`);
    at++;
    // Up to the closing quote; a doubled quote or backslash stands for one.
    let lexeme = '';
    let from = at;
    for (;;) {
      const code = text.charCodeAt(at);
      if (Number.isNaN(code)) throw new Error('unterminated lexeme in tsvector');
      if (code === 92 || (code === 39 && text.charCodeAt(at + 1) === 39)) {
        lexeme += text.slice(from, at + 1);
        at += 2;
        from = at;
      } else if (code === 39) {
        lexeme += text.slice(from, at);
        at++;
        break;
      } else at++;
    }
    let count = 0;
    // Positions: digits, a weight letter unless D, a comma before the next. Read by char code: this runs per word loaded.
    if (text.charCodeAt(at) === 58) {
      at++;
      for (;;) {
        let position = 0;
        let code = text.charCodeAt(at);
        while (code >= 48 && code <= 57) {
          position = position * 10 + code - 48;
          code = text.charCodeAt(++at);
        }
        // A = 65 → 3, B → 2, C → 1, D → 0.
        let weight = 0;
        if (code >= 65 && code <= 68) {
          weight = 68 - code;
          code = text.charCodeAt(++at);
        }
        if (count === positions.length) {
          const larger = new Uint16Array(count * 2);
          larger.set(positions);
          positions = larger;
        }
        positions[count++] = (weight << 14) | position;
        if (code !== 44) break;
        at++;
      }
    }
    each(lexeme, positions, count);
  }
}
