// The pure text pieces behind the post jobs: blocks of a body (HTML and
// Markdown), the recrawl diff's counts, and the extractive summary's choice.
import { textBlocks } from '../../worker/posts/blocks.ts';
import { diffSummary } from '../../worker/posts/diff.ts';
import { extractiveSummary, titleAndExcerpt } from '../../worker/posts/local-transforms.ts';

const paragraphs = (...texts: string[]) => texts.map((text) => ({ kind: 'paragraph' as const, text }));

it('reads innermost HTML blocks once, and Markdown by blank lines with # headings', () => {
  expect(textBlocks('<h2>Head</h2><ul><li><p>One</p></li></ul><p>Two  words</p>', 'html')).toEqual([
    { kind: 'heading', text: 'Head' },
    { kind: 'paragraph', text: 'One' },
    { kind: 'paragraph', text: 'Two words' },
  ]);
  expect(textBlocks('# Title\n\nFirst\nline\n\n- item', 'markdown')).toEqual([
    { kind: 'heading', text: 'Title' },
    { kind: 'paragraph', text: 'First line' },
    { kind: 'paragraph', text: 'item' },
  ]);
});

it('counts paragraphs added, removed and changed around the unchanged ones', () => {
  const diff = diffSummary(
    { title: 'T', blocks: paragraphs('a', 'b', 'c', 'd') },
    { title: 'T', blocks: paragraphs('a', 'B', 'c', 'e', 'f') },
  );
  expect(diff).toEqual({
    title_changed: false,
    paragraphs: { before: 4, after: 5, added: 1, removed: 0, changed: 2, unchanged: 2 },
    words: { before: 4, after: 5 },
  });
  expect(diffSummary({ title: 'T', blocks: paragraphs('a', 'b') }, { title: 'U', blocks: [] })).toMatchObject({
    title_changed: true,
    paragraphs: { removed: 2, added: 0, changed: 0 },
  });
});

it('keeps the sentences richest in frequent words, in their order, and titles from the first heading', () => {
  const blocks = [
    { kind: 'heading' as const, text: 'Pier' },
    ...paragraphs('Cats sleep. The pier is long. Dogs bark.', 'The pier has lamps on the pier.'),
  ];
  expect(extractiveSummary(blocks, 2)).toEqual(['The pier is long.', 'The pier has lamps on the pier.']);
  expect(titleAndExcerpt(blocks)).toEqual({ title: 'Pier', excerpt: 'Cats sleep. The pier is long. Dogs bark.' });
  expect(titleAndExcerpt([])).toBeNull();
});
