import {
  CreateKeyCommand,
  GetPublicKeyCommand,
  type KMSClient,
  ScheduleKeyDeletionCommand,
  SignCommand,
} from '@aws-sdk/client-kms';
import { base64url, exportJWK, importSPKI } from 'jose';
import { PAYER_SIGNING_ALG, type RsaPublicJwk } from '#lib/entities/payer-signing-keys';
import { assertionHeaderOf, type PayerKeyKeeper } from './key-keeper.ts';
import { PAYER_KEY_CLIENT_TAG, PAYER_KEY_PURPOSE, PAYER_KEY_PURPOSE_TAG } from './kms-key-tags.ts';

/**
 * Keeper adapter for AWS KMS: one asymmetric key (RSA_2048, SIGN_VERIFY) per signing key, tagged for
 * payer assertions and with its client. KMS signs RS384 as RSASSA_PKCS1_V1_5_SHA_384, whose signature is
 * the JWS signature as it is (no DER to unwrap, unlike ECDSA), so the compact JWS is
 * `base64url(header).base64url(claims).base64url(signature)`, with jose's base64url (RFC 7515 §7.1).
 * No KMS-JWT library is used (docs/payer-api.md, "Keepers", says why).
 *
 * `create` and `discard` are an operator's (the admin CLI, with the operator's credentials); the signing
 * function holds kms:Sign alone, on keys with the purpose tag.
 */
type KmsSender = Pick<KMSClient, 'send'>;

const KMS_SIGNING_ALGORITHM = 'RSASSA_PKCS1_V1_5_SHA_384';
/** KMS signs a RAW message of at most 4096 bytes; an assertion's signing input is about 600. */
const MAX_RAW_MESSAGE_BYTES = 4096;
/** How long KMS waits before deleting a discarded key: the longest it allows, for an operator to cancel. */
const DELETION_WINDOW_DAYS = 30;

const pemOf = (spki: Uint8Array) =>
  `-----BEGIN PUBLIC KEY-----\n${Buffer.from(spki)
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .trimEnd()}\n-----END PUBLIC KEY-----\n`;

/** The public key KMS holds for `keyId`, as a JWK, checked to be the kind of key assertions need. */
const publicJwkOf = async (kms: KmsSender, keyId: string): Promise<RsaPublicJwk> => {
  const { PublicKey, KeySpec, KeyUsage, SigningAlgorithms } = await kms.send(new GetPublicKeyCommand({ KeyId: keyId }));
  if (
    !PublicKey ||
    KeySpec !== 'RSA_2048' ||
    KeyUsage !== 'SIGN_VERIFY' ||
    !SigningAlgorithms?.includes(KMS_SIGNING_ALGORITHM)
  ) {
    throw new Error('The KMS key is not an RSA_2048 signing key');
  }
  const { kty, n, e } = await exportJWK(await importSPKI(pemOf(PublicKey), PAYER_SIGNING_ALG, { extractable: true }));
  if (kty !== 'RSA' || !n || !e) throw new Error('The KMS public key is not an RSA key');
  return { kty: 'RSA', n, e };
};

const encodeJson = (value: unknown) => base64url.encode(JSON.stringify(value));

export const kmsKeyKeeper = (kms: KmsSender): PayerKeyKeeper => ({
  kind: 'kms',

  create: async (clientId) => {
    const { KeyMetadata } = await kms.send(
      new CreateKeyCommand({
        KeySpec: 'RSA_2048',
        KeyUsage: 'SIGN_VERIFY',
        Description: 'Service review: SMART client assertions to payers, for one API client',
        Tags: [
          { TagKey: PAYER_KEY_PURPOSE_TAG, TagValue: PAYER_KEY_PURPOSE },
          { TagKey: PAYER_KEY_CLIENT_TAG, TagValue: clientId },
        ],
      }),
    );
    const keyRef = KeyMetadata?.Arn;
    if (!keyRef) throw new Error('KMS created no key');
    return { keyRef, publicJwk: await publicJwkOf(kms, keyRef) };
  },

  signJwt: async (keyRef, kid, claims) => {
    const signingInput = `${encodeJson(assertionHeaderOf(kid))}.${encodeJson(claims)}`;
    const message = Buffer.from(signingInput, 'ascii');
    if (message.byteLength > MAX_RAW_MESSAGE_BYTES) throw new Error('The assertion is too large for KMS to sign');
    const { Signature } = await kms.send(
      new SignCommand({
        KeyId: keyRef,
        Message: message,
        MessageType: 'RAW',
        SigningAlgorithm: KMS_SIGNING_ALGORITHM,
      }),
    );
    if (!Signature) throw new Error('KMS returned no signature');
    return `${signingInput}.${base64url.encode(Signature)}`;
  },

  discard: async (keyRef) => {
    await kms.send(new ScheduleKeyDeletionCommand({ KeyId: keyRef, PendingWindowInDays: DELETION_WINDOW_DAYS }));
  },
});
