import { endpoint } from '#lib/http/endpoint';
import { badRequest } from '#lib/http/problem';
import { json } from '#lib/http/response';
import { KEY_SET_ID_PATTERN } from '#lib/payer-api/signing-keys/key-set-id';
import { JWKS_MAX_AGE_SECONDS } from '#lib/payer-api/signing-keys/key-sets';
import { publishedJwks } from '#lib/payer-api/signing-keys/service';

const keySetIdPattern = new RegExp(KEY_SET_ID_PATTERN);

/**
 * GET /api/external/v1.1/Payers/jwks/{keySetId}: an API client's published payer signing keys, public (payers
 * fetch it with no credential of ours). Cacheable for JWKS_MAX_AGE_SECONDS: a rotation publishes a new key
 * that long before it signs. An unknown id is a 404, never cached, so a key set made later is seen at once.
 */
export const handler = endpoint(async (event) => {
  const keySetId = event.pathParameters?.keySetId;
  if (!keySetId || !keySetIdPattern.test(keySetId)) {
    throw badRequest('keySetId must be 22 characters: letters, digits, - and _.', { parameter: 'keySetId' });
  }
  return json(200, await publishedJwks(keySetId), { 'Cache-Control': `public, max-age=${JWKS_MAX_AGE_SECONDS}` });
});
