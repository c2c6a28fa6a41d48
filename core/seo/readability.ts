// How hard a text is to read, by the measure that suits its language:
// Flesch reading ease for English, Amstad's adaptation of it for German (both
// need syllables, counted as vowel groups), and LIX for every other language
// (sentence length and the share of words over six letters: no syllables,
// so it works for any alphabetic script). Flesch and Amstad grow as the text
// gets easier; LIX grows as it gets harder.
export type Readability = {
  method: 'flesch' | 'amstad' | 'lix';
  score: number;
  /** easy, fair or difficult, on the method's own scale. */
  level: 'easy' | 'fair' | 'difficult';
  words: number;
  sentences: number;
};

export const wordsOf = (text: string) => text.match(/[\p{L}\p{N}]+(?:['’-][\p{L}\p{N}]+)*/gu) ?? [];

const sentencesOf = (text: string) =>
  Math.max(1, text.split(/[.!?…]+(?:\s|$)/u).filter((part) => /\p{L}/u.test(part)).length);

/** Vowel groups, a silent final e left out (English); at least one a word. */
function syllables(word: string, vowels: RegExp, silentE: boolean): number {
  const lower = word.toLowerCase();
  let count = lower.match(vowels)?.length ?? 0;
  if (silentE && count > 1 && /[^aeiouy]e$/.test(lower)) count--;
  return Math.max(1, count);
}

const round = (value: number) => Math.round(value * 10) / 10;

export function readability(text: string, locale: string): Readability {
  const words = wordsOf(text);
  const sentences = sentencesOf(text);
  const count = Math.max(1, words.length);
  const perSentence = count / sentences;
  const language = locale.toLowerCase().split('-')[0];
  if (language === 'en' || language === 'de') {
    const english = language === 'en';
    const vowels = english ? /[aeiouy]+/g : /[aeiouyäöü]+/g;
    const perWord = words.reduce((sum, word) => sum + syllables(word, vowels, english), 0) / count;
    const score = english ? 206.835 - 1.015 * perSentence - 84.6 * perWord : 180 - perSentence - 58.5 * perWord;
    const level = score >= 60 ? 'easy' : score >= 30 ? 'fair' : 'difficult';
    return { method: english ? 'flesch' : 'amstad', score: round(score), level, words: words.length, sentences };
  }
  const long = words.filter((word) => [...word].length > 6).length;
  const score = perSentence + (100 * long) / count;
  const level = score < 40 ? 'easy' : score < 55 ? 'fair' : 'difficult';
  return { method: 'lix', score: round(score), level, words: words.length, sentences };
}
