// What the search index holds: every searchable item is one of these kinds.
export const searchKinds = ['post', 'page', 'element', 'media'] as const;
export type SearchKind = (typeof searchKinds)[number];
