// The adapter of each translatable kind, by the URL segment that names it.
import { elementsAdapter } from './elements.ts';
import { mediaAdapter } from './media.ts';
import type { AnyAdapter, TranslationKind } from './model.ts';
import { pagesAdapter } from './pages.ts';
import { postsAdapter } from './posts.ts';

export const adapters: Record<TranslationKind, AnyAdapter> = {
  elements: elementsAdapter,
  media: mediaAdapter,
  pages: pagesAdapter,
  posts: postsAdapter,
};
