import { calculateJwkThumbprint, type JWTPayload } from 'jose';
import { PAYER_SIGNING_ALG, type PayerKeyKeeperKind, type RsaPublicJwk } from '#lib/entities/payer-signing-keys';

/**
 * Port: where a client's private signing keys live and sign, without ever leaving (docs/payer-api.md,
 * "Keepers"). Adapters: kms-key-keeper.ts (an AWS KMS asymmetric key per signing key) and
 * local-key-keeper.ts (a PKCS#8 file per key under the local stack's state directory).
 */
interface NewSigningKey {
  /** The keeper's name for the private key, stored with the key (a KMS key ARN, a file name). */
  keyRef: string;
  publicJwk: RsaPublicJwk;
}

export interface PayerKeyKeeper {
  readonly kind: PayerKeyKeeperKind;
  /** A new RS384 key pair for the client's assertions; only its public half comes out. */
  create(clientId: string): Promise<NewSigningKey>;
  /** The compact JWS of `claims` signed with the key `keyRef` names, its header naming `kid`. */
  signJwt(keyRef: string, kid: string, claims: JWTPayload): Promise<string>;
  /** The key will never sign again: the keeper deletes it (KMS: scheduled, so an operator can still cancel). */
  discard(keyRef: string): Promise<void>;
}

/** The protected header of every client assertion (SMART Backend Services: `typ: JWT`, the key's `kid`). */
export const assertionHeaderOf = (kid: string) => ({ alg: PAYER_SIGNING_ALG, typ: 'JWT', kid }) as const;

/** RFC 7638 thumbprint (SHA-256) of a public JWK: the key's `kid`, whoever keeps it. */
export const kidOf = (publicJwk: RsaPublicJwk) => calculateJwkThumbprint(publicJwk, 'sha256');
