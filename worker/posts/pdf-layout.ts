// A PDF page's text items as lines, and lines as blocks (headings and
// paragraphs): pure functions over what pdf.js reports, run on the PDF's
// own thread (./pdf-thread.ts). Headings are told by type size: a line set
// clearly larger than the body text (the size most characters use) is a
// heading.
import type { Block } from './blocks.ts';

export type Line = { text: string; size: number; y: number };
export type TextItem = { str: string; transform: number[]; height: number; hasEOL: boolean };

const headingRatio = 1.25;

/** The page's lines, top to bottom as written, each with its largest type size. */
export function linesOf(items: TextItem[]): Line[] {
  const lines: Line[] = [];
  let current: Line | null = null;
  for (const item of items) {
    const y = item.transform[5] ?? 0;
    const size = Math.abs(item.transform[3] ?? item.height) || item.height;
    if (current && Math.abs(current.y - y) > Math.max(current.size, size) * 0.5) {
      lines.push(current);
      current = null;
    }
    if (item.str) {
      current ??= { text: '', size: 0, y };
      current.text += item.str;
      if (item.str.trim()) current.size = Math.max(current.size, size);
    }
    if (item.hasEOL && current) {
      lines.push(current);
      current = null;
    }
  }
  if (current) lines.push(current);
  return lines.map((line) => ({ ...line, text: line.text.replace(/\s+/g, ' ').trim() })).filter((line) => line.text);
}

/** The size most characters are set in: the body text's. */
function bodySize(lines: Line[]): number {
  const chars = new Map<number, number>();
  for (const line of lines)
    chars.set(Math.round(line.size), (chars.get(Math.round(line.size)) ?? 0) + line.text.length);
  return [...chars].sort((a, b) => b[1] - a[1])[0]?.[0] ?? 12;
}

/** Lines into blocks: a heading per large line; a paragraph runs until the type size changes or a gap opens. */
export function blocksOf(lines: Line[]): Block[] {
  const body = bodySize(lines);
  const blocks: Block[] = [];
  let previous: Line | null = null;
  for (const line of lines) {
    const heading = line.size >= body * headingRatio && line.text.length <= 200;
    const last = blocks.at(-1);
    const continues =
      !heading &&
      last?.kind === 'paragraph' &&
      previous !== null &&
      Math.abs(previous.size - line.size) < 0.5 &&
      Math.abs(previous.y - line.y) <= line.size * 1.8;
    if (continues) last.text = `${last.text.replace(/-$/, '')}${last.text.endsWith('-') ? '' : ' '}${line.text}`;
    else blocks.push({ kind: heading ? 'heading' : 'paragraph', text: line.text });
    previous = line;
  }
  return blocks;
}
