import { PAYER_SIGNING_ALG } from '#lib/entities/payer-signing-keys';
import { closed, type JsonSchema, type Members, string } from '#lib/openapi/schema-builders';
import { MAX_KEYS_PER_SET, type PublishedJwk } from '#lib/payer-api/signing-keys/key-sets';

/**
 * The payer JWKS as the public route answers it (docs/payer-api.md, "The JWKS and its URL"): closed, so a private member
 * (`d`, `p`, `q`, `dp`, `dq`, `qi`) can never conform. Members typed against the published JWK.
 */
const BASE64URL = '^[A-Za-z0-9_-]+$';

const jwk = {
  kty: string('RSA', { const: 'RSA' }),
  n: string('The modulus, base64url', { pattern: BASE64URL }),
  e: string('The public exponent, base64url', { pattern: BASE64URL }),
  kid: string('The key id: its RFC 7638 thumbprint (SHA-256), as the assertions name it', { pattern: BASE64URL }),
  alg: string('The one algorithm assertions are signed with', { const: PAYER_SIGNING_ALG }),
  use: string('Signatures only', { const: 'sig' }),
} satisfies Members<PublishedJwk>;

export const payerJwksSchemas: Record<string, JsonSchema> = {
  PayerJwk: closed('PayerJwk', 'An RSA public key (RFC 7517): public members only', jwk),
  PayerJwks: closed(
    'PayerJwks',
    "An API client's published signing keys (RFC 7517 JWK Set): the key that signs and, around a rotation, the one it replaces or the one about to replace it",
    { keys: { type: 'array', maxItems: MAX_KEYS_PER_SET, items: { $ref: '#/components/schemas/PayerJwk' } } },
  ),
};
