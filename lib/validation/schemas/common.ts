/** Building blocks shared by the schemas. Limits here are documented in docs/validation.md. */
export const DRAFT = 'http://json-schema.org/draft-07/schema#';

/** Client-chosen identifiers: 1–64 characters, no `#` or `/` (they delimit keys and paths). */
export const ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:@-]*$';
export const ID_MAX_LENGTH = 64;
export const identifier = (description: string) =>
  ({ type: 'string', minLength: 1, maxLength: ID_MAX_LENGTH, pattern: ID_PATTERN, description }) as const;

/**
 * Payer ids (a clearinghouse's, e.g. `87726`): what a request's `patient.PayerId` (1–80 characters)
 * names, in the characters the ids of a portal account's payers, the directory of payer endpoints and
 * payer connections accept, so that each of them can be matched against a request's.
 */
export const PAYER_ID_PATTERN = '^[A-Za-z0-9][A-Za-z0-9._:-]*$';
export const PAYER_ID_MAX_LENGTH = 80;
export const payerIdentifier = (description: string) =>
  ({ type: 'string', minLength: 1, maxLength: PAYER_ID_MAX_LENGTH, pattern: PAYER_ID_PATTERN, description }) as const;

export const text = (maxLength: number, description?: string) =>
  ({ type: 'string', minLength: 1, maxLength, ...(description ? { description } : {}) }) as const;

export const date = (description: string) => ({ type: 'string', format: 'date', description }) as const;

export const enumOf = (codes: string[], description: string) => ({ type: 'string', enum: codes, description }) as const;

/** Paging of every list (lib/pagination/cursor.ts): a page size, 1–100 (default 25), and the previous page's cursor. */
export const paging = {
  pageSize: { type: 'integer', minimum: 1, maximum: 100, description: 'Default 25' },
  cursor: { type: 'string', minLength: 1, maxLength: 1024, description: 'nextCursor of the previous page' },
} as const;
