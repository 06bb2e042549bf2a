import { describe, expect, it } from 'vitest';
import { normalizeSearchText, searchGramsOf, searchGramsOfQuery } from '#lib/entities/portal-account';

/* The trigrams the search index keys entries by (docs/data-model.md, "Free text: a trigram index"). */
describe('search trigrams', () => {
  it('are the distinct 3-code-point windows of each text, never across two texts', () => {
    expect(searchGramsOf('abcab', 'xy')).toEqual(['abc', 'bca', 'cab']);
    expect(searchGramsOf('ab', 'cd')).toEqual([]);
  });

  it('count code points, not UTF-16 units (a key is UTF-8), and skip a half character', () => {
    expect(searchGramsOf('a😀bc')).toEqual(['a😀b', '😀bc']);
    expect(searchGramsOf('a\ud800bcd')).toEqual(['bcd']);
  });

  it('leave a search of 1–2 characters, or with a half character, to the FilterExpression', () => {
    expect(searchGramsOfQuery('ab')).toBeUndefined();
    expect(searchGramsOfQuery('😀😀')).toBeUndefined();
    expect(searchGramsOfQuery('ab\udc00')).toBeUndefined();
    expect(searchGramsOfQuery('abc')).toEqual(['abc']);
  });

  it('of a search are among those of every text that holds it, after the same normalization', () => {
    const text = normalizeSearchText('Ｃｌｉｎｉｃ ﬁeld Straße');
    const search = normalizeSearchText('FIELD STRASSE'.slice(0, 8));
    expect(text.includes(search)).toBe(true);
    const grams = new Set(searchGramsOf(text));
    expect(searchGramsOfQuery(search)!.every((gram) => grams.has(gram))).toBe(true);
  });
});
