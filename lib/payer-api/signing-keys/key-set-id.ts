import { createHash } from 'node:crypto';

/*
 * Where a client's public signing keys are published (the JWKS a payer fetches to verify our client
 * assertions). The URL names the client's key set by an id derived from the client id: a one-way hash,
 * so the public URL neither reveals the client id nor needs a lookup to be written; client ids are random
 * UUIDs, so the id cannot be guessed either. The JWKS route finds the key set by this id.
 */

/** The public id of a client's key set: 22 base64url characters (132 bits) of SHA-256 over the client id. */
export const keySetIdOf = (clientId: string): string =>
  createHash('sha256').update(`payer-signing-keys:${clientId}`).digest('base64url').slice(0, 22);

/** The JWKS route's path for a key set, under the API's base path. */
export const jwksPathOf = (keySetId: string): string => `/api/external/v1.1/Payers/jwks/${keySetId}`;

/** What a key set id is (the JWKS route refuses anything else with a 400). */
export const KEY_SET_ID_PATTERN = '^[A-Za-z0-9_-]{22}$';
