import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto';
import {
  CreateKeyCommand,
  GetPublicKeyCommand,
  type KMSClient,
  ScheduleKeyDeletionCommand,
  SignCommand,
} from '@aws-sdk/client-kms';
import { createLocalJWKSet, jwtVerify } from 'jose';
import { describe, expect, it } from 'vitest';
import { kidOf } from '#lib/payer-api/signing-keys/key-keeper';
import { jwksOf, withNewKey } from '#lib/payer-api/signing-keys/key-sets';
import { kmsKeyKeeper } from '#lib/payer-api/signing-keys/kms-key-keeper';
import { clientAssertion } from '#lib/payer-api/smart/client-assertion';

/*
 * AWS KMS cannot run here. This stands in for it, and only for it: a KMS that keeps RSA keys made by
 * node:crypto and signs RSASSA_PKCS1_V1_5_SHA_384 as KMS does (PKCS #1 v1.5 over SHA-384 of the raw
 * message), answering the four commands the keeper sends. Everything of ours runs as it is.
 */
const fakeKms = (keySpec = 'RSA_2048') => {
  const keys = new Map<string, { privateKey: KeyObject; publicKey: KeyObject; tags: unknown }>();
  const sent: unknown[] = [];
  const send = async (command: unknown) => {
    sent.push(command);
    if (command instanceof CreateKeyCommand) {
      const arn = `arn:aws:kms:us-east-1:111122223333:key/${keys.size + 1}`;
      keys.set(arn, { ...generateKeyPairSync('rsa', { modulusLength: 2048 }), tags: command.input.Tags });
      return { KeyMetadata: { Arn: arn, KeyId: String(keys.size) } };
    }
    if (command instanceof GetPublicKeyCommand) {
      const key = keys.get(command.input.KeyId!)!;
      return {
        PublicKey: new Uint8Array(key.publicKey.export({ type: 'spki', format: 'der' })),
        KeySpec: keySpec,
        KeyUsage: 'SIGN_VERIFY',
        SigningAlgorithms: ['RSASSA_PKCS1_V1_5_SHA_256', 'RSASSA_PKCS1_V1_5_SHA_384', 'RSASSA_PSS_SHA_384'],
      };
    }
    if (command instanceof SignCommand) {
      const { KeyId, Message, MessageType, SigningAlgorithm } = command.input;
      if (MessageType !== 'RAW' || SigningAlgorithm !== 'RSASSA_PKCS1_V1_5_SHA_384') throw new Error('unexpected');
      return { Signature: new Uint8Array(sign('sha384', Message!, keys.get(KeyId!)!.privateKey)) };
    }
    if (command instanceof ScheduleKeyDeletionCommand) return {};
    throw new Error('a command KMS was not expected to get');
  };
  return { kms: { send } as unknown as Pick<KMSClient, 'send'>, keys, sent };
};

describe('the KMS keeper', () => {
  it('creates an RSA_2048 signing key tagged for payer assertions and its client, and publishes its public half', async () => {
    const { kms, keys, sent } = fakeKms();
    const created = await kmsKeyKeeper(kms).create('client-a');
    expect(created.keyRef).toBe('arn:aws:kms:us-east-1:111122223333:key/1');
    expect((sent[0] as CreateKeyCommand).input).toMatchObject({ KeySpec: 'RSA_2048', KeyUsage: 'SIGN_VERIFY' });
    expect(keys.get(created.keyRef)!.tags).toEqual([
      { TagKey: 'service-review:purpose', TagValue: 'payer-assertion-signing' },
      { TagKey: 'service-review:client-id', TagValue: 'client-a' },
    ]);
    expect(created.publicJwk).toEqual(keys.get(created.keyRef)!.publicKey.export({ format: 'jwk' }));
  });

  it('assembles a compact JWS that jose verifies against the published JWK', async () => {
    const { kms } = fakeKms();
    const keeper = kmsKeyKeeper(kms);
    const created = await keeper.create('client-a');
    const kid = await kidOf(created.publicJwk);
    const now = new Date();
    const { keySet } = withNewKey(undefined, 'client-a', { kid, keeper: 'kms', ...created }, now);
    const key = { kid, sign: (claims: Record<string, unknown>) => keeper.signJwt(created.keyRef, kid, claims) };
    const tokenUrl = 'https://payer.example/token';
    const assertion = await clientAssertion({ clientId: 'payer-id', tokenUrl, key, now });
    const { payload, protectedHeader } = await jwtVerify(assertion, createLocalJWKSet(jwksOf(keySet, now)), {
      issuer: 'payer-id',
      subject: 'payer-id',
      audience: tokenUrl,
      algorithms: ['RS384'],
      currentDate: now,
    });
    expect(protectedHeader).toEqual({ alg: 'RS384', typ: 'JWT', kid });
    expect(payload.jti).toBeTypeOf('string');
    // A signature over other claims does not verify: the JWS binds the signing input.
    const [header, , signature] = assertion.split('.');
    const forged = `${header}.${Buffer.from(JSON.stringify({ ...payload, sub: 'other' })).toString('base64url')}.${signature}`;
    await expect(jwtVerify(forged, createLocalJWKSet(jwksOf(keySet, now)))).rejects.toThrow(/signature/i);
  });

  it('refuses a KMS key that is not an RSA_2048 signing key', async () => {
    const { kms } = fakeKms('ECC_NIST_P384');
    await expect(kmsKeyKeeper(kms).create('client-a')).rejects.toThrow('not an RSA_2048 signing key');
  });

  it('discards a key by scheduling its deletion, the longest window KMS allows', async () => {
    const { kms, sent } = fakeKms();
    await kmsKeyKeeper(kms).discard('arn:aws:kms:us-east-1:111122223333:key/9');
    expect((sent[0] as ScheduleKeyDeletionCommand).input).toEqual({
      KeyId: 'arn:aws:kms:us-east-1:111122223333:key/9',
      PendingWindowInDays: 30,
    });
  });
});
