import type { PageRequest } from '#lib/pagination/cursor';
import { assertValid, type CompiledValidator } from '#lib/validation/validator';

/** A number written in decimal; anything else stays a string, for the schema to refuse by its type. */
const DECIMAL = /^-?[0-9]+(\.[0-9]+)?$/;

/**
 * `?pageSize=&cursor=` of a list, checked against its query schema: a bad value gets the same
 * Validation result as in a body (`/pageSize: Maximum error for value "101". …`). An empty cursor asks
 * for the first page; other query parameters are ignored, as query strings usually are.
 */
export const pageQueryOf = (
  query: Record<string, string | undefined> | null,
  validator: CompiledValidator,
): PageRequest => {
  const { pageSize, cursor } = query ?? {};
  const request = {
    ...(pageSize !== undefined ? { pageSize: DECIMAL.test(pageSize) ? Number(pageSize) : pageSize } : {}),
    ...(cursor ? { cursor } : {}),
  };
  assertValid(validator, request);
  return request as PageRequest;
};
