import { attr, defineEntity } from './define-entity.ts';
import { clientEntity } from './tenancy.ts';

/**
 * The keys an API client (tenant) signs its SMART client assertions with, as stored (docs/payer-api.md, "Signing keys";
 * the port: lib/payer-api/signing-keys/key-set-store.ts). One key set per client: its public part is the
 * JWKS payers fetch, its private parts never leave their keeper (KMS on AWS, a file of the local stack).
 */

/** The one algorithm: RSASSA-PKCS1-v1_5 with SHA-384, what KMS signs with RSA_2048 keys and SMART allows. */
export const PAYER_SIGNING_ALG = 'RS384';

/** Where a private key lives: an AWS KMS asymmetric key, or a PKCS#8 file under the local stack's state. */
export type PayerKeyKeeperKind = 'kms' | 'local';

/** An RSA public key as a JWK: only the public members (RFC 7518 §6.3.1). */
export interface RsaPublicJwk {
  kty: 'RSA';
  n: string;
  e: string;
}

export interface PayerSigningKey {
  /** The RFC 7638 thumbprint of the public key: the JWS header's `kid`. */
  kid: string;
  alg: typeof PAYER_SIGNING_ALG;
  keeper: PayerKeyKeeperKind;
  /** The keeper's name for the private key: a KMS key ARN, or the local key file's name. */
  keyRef: string;
  publicJwk: RsaPublicJwk;
  /** When it appeared in the JWKS. */
  publishedAt: string;
  /** From when it may sign: a rotation publishes a key one JWKS cache lifetime before it signs. */
  activeFrom: string;
  /** From when it is no longer published nor used (set, in the future, by the rotation that replaces it). */
  retiredAt: string | null;
}

export interface PayerSigningKeySet {
  clientId: string;
  /** keySetIdOf(clientId): the public id in the JWKS URL. */
  keySetId: string;
  /** Oldest first. */
  keys: PayerSigningKey[];
  version: number;
  createdAt: string;
  updatedAt: string;
}

/**
 * In its client's partition, beside the Client item: the signer finds the key of the client whose
 * connection it signs for by that client's own key (never by a key set id), so one tenant's key cannot
 * sign for another. gsi1 finds it by its public id, for the JWKS route, which knows no client.
 */
export const payerSigningKeySetEntity = defineEntity<PayerSigningKeySet>()({
  name: 'PayerSigningKeySet',
  keys: {
    pk: clientEntity.keys.pk.template,
    sk: 'PAYERSIGNINGKEYS',
    gsi1pk: 'PAYERJWKS#<keySetId>',
    gsi1sk: 'PAYERJWKS',
  },
  attributes: {
    clientId: attr.string(),
    keySetId: attr.string(),
    keys: attr.list<PayerSigningKey>(),
    version: attr.number(),
    createdAt: attr.string(),
    updatedAt: attr.string(),
  },
});
