import type { APIGatewayProxyEvent } from 'aws-lambda';
import { header } from './path.ts';
import { type ApiResult, noContent } from './response.ts';

/*
 * Conditional GET (RFC 9110 §13.1.2): If-None-Match is `*` or a comma-separated list of entity tags,
 * compared weakly (`W/"1"` matches `"1"`): a cache revalidating what it holds may send either form.
 */

/** One list element: blanks, an entity tag (weak or not) and blanks, or nothing (empty elements are allowed). */
const ELEMENT = /[ \t]*(?:(?:W\/)?("[\x21\x23-\x7e\x80-\xff]*")[ \t]*)?(?:,|$)/y;

/** The opaque tags of an If-None-Match list (`W/` dropped), or undefined when it is not such a list. */
export const entityTagsOf = (value: string): string[] | undefined => {
  const element = new RegExp(ELEMENT);
  const tags: string[] = [];
  // Every match but the one at the end consumes its comma, so the loop advances.
  while (element.lastIndex < value.length) {
    const match = element.exec(value);
    if (!match) return undefined;
    if (match[1]) tags.push(match[1]);
  }
  return tags;
};

/**
 * Whether `If-None-Match` holds for the current ETag, i.e. the client's copy is current. A header that
 * is not a valid list is ignored (no match): the client then simply gets the representation.
 */
export const ifNoneMatchHolds = (ifNoneMatch: string | undefined, currentEtag: string): boolean => {
  if (ifNoneMatch === undefined) return false;
  if (ifNoneMatch.trim() === '*') return true;
  const current = currentEtag.replace(/^W\//, '');
  return entityTagsOf(ifNoneMatch)?.includes(current) ?? false;
};

/** For a GET of a resource whose ETag is `etag`: 304 with that ETag when the client's copy is current, else undefined. */
export const notModified = (event: Pick<APIGatewayProxyEvent, 'headers'>, etag: string): ApiResult | undefined =>
  ifNoneMatchHolds(header(event, 'if-none-match'), etag)
    ? { ...noContent({ ETag: etag }), statusCode: 304 }
    : undefined;
