// Completions as a reader types: titles that start with what was typed, then
// the site's most frequent words that complete its last word. When neither
// finds anything the last word is taken as misspelt and the most alike words
// (pg_trgm) complete it instead.
import { z } from 'zod';
import { sql, type CommonQueryMethods } from '../../db/pool.ts';
import type { Site } from '../tenancy/sites.ts';
import { searchKinds } from './kinds.ts';

export const maxSuggestions = 10;
const maxTitles = 5;

export const suggestQuery = z.object({
  q: z.string().trim().min(1).max(100).describe('What the reader has typed so far'),
  locale: z.string().max(35).optional().describe('Only from items in this locale'),
  limit: z.coerce.number().int().min(1).max(maxSuggestions).default(maxSuggestions),
});
export type SuggestQuery = z.output<typeof suggestQuery>;

export const suggestionSchema = z
  .object({
    text: z.string().describe('The completed query'),
    source: z.enum(['title', 'word']).describe('A title that starts with the text typed, or a frequent word'),
    kind: z.enum(searchKinds).nullable().describe('For a title: what it is the title of'),
    id: z.uuid().nullable(),
    path: z.string().nullable(),
  })
  .meta({ id: 'SearchSuggestion' });
export type Suggestion = z.infer<typeof suggestionSchema>;

export const suggestionsSchema = z
  .object({
    suggestions: z.array(suggestionSchema),
    corrected: z.boolean().describe('True when the last word matched nothing and its likeliest spellings were used'),
  })
  .meta({ id: 'SearchSuggestions' });

const likePrefix = (text: string) => `${text.replace(/[\\%_]/g, '\\$&')}%`;

const completionRow = z.object({
  source: z.enum(['title', 'word']),
  text: z.string(),
  kind: z.enum(searchKinds).nullable(),
  id: z.uuid().nullable(),
  path: z.string().nullable(),
});
const wordRow = z.object({ term: z.string() });

export async function suggest(db: CommonQueryMethods, site: Site, query: SuggestQuery) {
  const typed = query.q.toLowerCase().replace(/\s+/g, ' ');
  const lastSpace = typed.lastIndexOf(' ');
  const head = typed.slice(0, lastSpace + 1);
  const last = typed.slice(lastSpace + 1);
  // Titles, then words, in one round trip (a completion is asked for at every key press); the
  // function reads the site's rows as their owner, so LIKE can use its index under row-level security (0041).
  const completions = await db.any(sql.type(completionRow)`
    select source, text, kind, id, path
    from search_completions(${site.id}, ${likePrefix(typed)}, ${last ? likePrefix(last) : null}, ${last},
                            ${query.locale ?? null}, ${Math.min(maxTitles, query.limit)}, ${query.limit})`);
  const titles = completions.filter((row) => row.source === 'title');
  let words: readonly { term: string }[] = completions
    .filter((row) => row.source === 'word')
    .map((row) => ({ term: row.text }));
  let corrected = false;
  if (titles.length === 0 && words.length === 0 && last.length >= 3) {
    words = await db.any(sql.type(wordRow)`
      select term from search_alike_terms(${site.id}, ${last}, ${query.locale ?? null}, ${query.limit})`);
    corrected = words.length > 0;
  }
  const suggestions: Suggestion[] = titles.map((row) => ({ ...row, source: 'title' as const }));
  const seen = new Set(suggestions.map((entry) => entry.text.toLowerCase()));
  for (const { term } of words) {
    const text = head + term;
    if (suggestions.length >= query.limit) break;
    if (seen.has(text)) continue;
    seen.add(text);
    suggestions.push({ text, source: 'word', kind: null, id: null, path: null });
  }
  return { suggestions, corrected };
}
