import { describe, expect, it } from 'vitest';
import { entityTagsOf, ifNoneMatchHolds, notModified } from '#lib/http/conditional';

describe('If-None-Match (RFC 9110 §13.1.2)', () => {
  it.each([
    ['"3"', true],
    ['W/"3"', true],
    ['*', true],
    [' * ', true],
    ['"1", "3"', true],
    ['"1",W/"3"', true],
    ['  "3"  ', true],
    ['"1" ,\t"3"\t', true],
    ['"1", , "3",', true],
    ['"2"', false],
    ['"1", W/"2"', false],
    ['3', false],
    ['"33"', false],
    ['w/"3"', false],
    ['"3" "4"', false],
    ['"3", *', false],
    ['', false],
  ])('%j against "3" → %s', (header, holds) => {
    expect(ifNoneMatchHolds(header, '"3"')).toBe(holds);
  });

  it('does not hold without the header', () => {
    expect(ifNoneMatchHolds(undefined, '"3"')).toBe(false);
  });

  it('compares weakly when the current ETag is weak too', () => {
    expect(ifNoneMatchHolds('"3"', 'W/"3"')).toBe(true);
    expect(ifNoneMatchHolds('W/"3"', 'W/"3"')).toBe(true);
  });

  it('drops `W/` from the current ETag only as its prefix', () => {
    expect(ifNoneMatchHolds('"ab"', '"aW/b"')).toBe(false);
    expect(ifNoneMatchHolds('"aW/b"', '"aW/b"')).toBe(true);
  });

  it('reads a list into its opaque tags, commas inside a tag included; anything else is not a list', () => {
    expect(entityTagsOf('W/"a", "b,c" ,,"" ')).toEqual(['"a"', '"b,c"', '""']);
    expect(entityTagsOf('')).toEqual([]);
    expect(entityTagsOf('"a" junk')).toBeUndefined();
    expect(entityTagsOf('"unterminated')).toBeUndefined();
    expect(entityTagsOf('W/ "a"')).toBeUndefined();
  });
});

describe('notModified', () => {
  const event = (ifNoneMatch?: string) => ({
    headers: ifNoneMatch === undefined ? {} : { 'if-none-match': ifNoneMatch },
  });

  it('answers 304 with the ETag and Cache-Control, and no body, when the copy is current', () => {
    const res = notModified(event('W/"7", "8"'), '"8"');
    expect(res).toMatchObject({ statusCode: 304, body: '' });
    expect(res?.headers).toMatchObject({ ETag: '"8"', 'Cache-Control': 'no-store' });
  });

  it('answers nothing (the caller sends the representation) otherwise', () => {
    expect(notModified(event('"7"'), '"8"')).toBeUndefined();
    expect(notModified(event(), '"8"')).toBeUndefined();
  });
});
