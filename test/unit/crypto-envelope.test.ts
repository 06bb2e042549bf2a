import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDecrypt } from '@aws-crypto/decrypt-node';
import { buildEncrypt } from '@aws-crypto/encrypt-node';
import { AlgorithmSuiteIdentifier, CommitmentPolicy } from '@aws-crypto/material-management-node';
import { RawAesKeyringNode, RawAesWrappingSuiteIdentifier } from '@aws-crypto/raw-aes-keyring-node';
import { DecryptCommand, GenerateDataKeyCommand } from '@aws-sdk/client-kms';
import { afterAll, describe, expect, it } from 'vitest';
import { loadOrCreateKeyFile } from '#lib/crypto/key-file';
import { cursorKeysFromEnvironment, KeyConfigurationError } from '#lib/crypto/key-sources';
import { canonicalContext, type Keyring, SecretDecryptionError } from '#lib/crypto/keyring';
import { kmsKeyring } from '#lib/crypto/kms-keyring';
import { KEY_NAMESPACE, localKeyIdOf, localKeyring } from '#lib/crypto/local-keyring';
import { openSecret } from '#lib/crypto/open';
import { sealSecret } from '#lib/crypto/seal';
import type { SealedSecretV1, SealedSecretV2 } from '#lib/crypto/sealed-secret';
import { keyringFromEnvironment } from '#lib/crypto/secrets-keyring';
import type { StoredPortalAccount } from '#lib/entities/portal-account';
import { encryptionContextOf } from '#lib/portal-accounts/credentials';
import { openPortalCredentials } from '#lib/portal-accounts/open-credentials';
import { sealCredential } from '#lib/portal-accounts/seal-credentials';
import { sealV1WithLocalKey } from '#test/support/legacy-envelope';

const dir = mkdtempSync(join(tmpdir(), 'crypto-test-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const context = { purpose: 'portal-account-credential', clientId: 'c1', organizationId: 'o1', field: 'password' };
const secret = 'correct horse battery staple ✓';

describe('local key file', () => {
  it('creates a 256-bit key with mode 0600 on first use and returns the same key afterwards', () => {
    const path = join(dir, 'nested', 'secrets.key');
    const key = loadOrCreateKeyFile(path);
    expect(key).toHaveLength(32);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(loadOrCreateKeyFile(path).equals(key)).toBe(true);
  });

  it('refuses a key file other users can read, and one that is not a 256-bit key', () => {
    const open = join(dir, 'open.key');
    writeFileSync(open, `${Buffer.alloc(32, 1).toString('base64')}\n`, { mode: 0o644 });
    expect(() => loadOrCreateKeyFile(open)).toThrow(/chmod 600/);
    const short = join(dir, 'short.key');
    writeFileSync(short, 'AAAA\n', { mode: 0o600 });
    expect(() => loadOrCreateKeyFile(short)).toThrow(/256-bit/);
  });
});

/** Envelopes written by the v1 code itself (before the Encryption SDK), under a fixed key. */
const V1_KEY = 'AwoRGB8mLTQ7QklQV15lbHN6gYiPlp2kq7K5wMfO1dw=';
const V1_LOCAL = {
  password: {
    v: 1,
    alg: 'AES-256-GCM',
    keyring: 'local',
    keyId: 'local:feb34538ad4a3feb',
    edk: 'sdvGXkmIGmdknBTL/pVPYKf9KHpihTWigjgpArOnCB9fXrD7zWu4UmcyWdgFo4/QLhFbNj6RSQSzkYBC',
    iv: 'ZgWNJkDPuf3brzan',
    ct: 'csmWgOGeed8=',
    tag: '0ZxXkQsWnu2TsbnNIJCPLA==',
  },
  totpSecret: {
    v: 1,
    alg: 'AES-256-GCM',
    keyring: 'local',
    keyId: 'local:feb34538ad4a3feb',
    edk: '83teNTuZVUiCO58dqEfKCHMk7y1wS+dlzoYyXMMavhkAPh/VRBqwXsJFp9S7NIj2J4XL1SxZzPsv4D55',
    iv: 'yLplNJxu8CpN0AHW',
    ct: 'npubDZ7Ty5oEyMo4Iu8qUg==',
    tag: 'eG8zaaiFKCFuhgcGG3wDbQ==',
  },
} as const satisfies Record<string, SealedSecretV1>;
const v1Ref = { clientId: 'c1', organizationId: 'o1', externalId: 'acc-1' };
const v1KeyFile = () => {
  const path = join(dir, 'v1-fixture.key');
  writeFileSync(path, `${V1_KEY}\n`, { mode: 0o600 });
  return path;
};

/** The SDK message's header: its encryption context, to check what is bound and stored in clear. */
const headerContextOf = async (keyring: Keyring, sealed: SealedSecretV2) => {
  const { decrypt } = buildDecrypt(CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT);
  const { messageHeader } = await decrypt(
    keyring.encryptionSdkKeyring().keyring,
    Buffer.from(sealed.message, 'base64'),
  );
  return messageHeader;
};

describe('envelope encryption with the local keyring (AWS Encryption SDK)', () => {
  const keyring = localKeyring(join(dir, 'envelope.key'));

  it('round-trips a secret as a v2 envelope holding neither the secret nor the data key in clear', async () => {
    const sealed = await sealSecret(keyring, secret, context);
    expect(Object.keys(sealed)).toEqual(['v', 'keyring', 'message']);
    expect(sealed).toMatchObject({ v: 2, keyring: 'local' });
    const message = Buffer.from(sealed.message, 'base64');
    expect(message.includes(Buffer.from(secret))).toBe(false);
    expect(await openSecret(keyring, sealed, context)).toBe(secret);
  });

  it('commits to the key (pinned suite, one data key); the stored context is exactly ours', async () => {
    const header = await headerContextOf(keyring, await sealSecret(keyring, secret, context));
    expect(header.suiteId).toBe(AlgorithmSuiteIdentifier.ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY);
    expect(header.encryptionContext).toEqual(context);
    expect(header.encryptedDataKeys).toHaveLength(1);
    expect(header.encryptedDataKeys[0]!.providerId).toBe('service-review/local-secrets-key');
  });

  it('uses a fresh data key for every secret', async () => {
    const [a, b] = await Promise.all([sealSecret(keyring, secret, context), sealSecret(keyring, secret, context)]);
    const [ha, hb] = await Promise.all([headerContextOf(keyring, a), headerContextOf(keyring, b)]);
    expect(Buffer.from(ha.encryptedDataKeys[0]!.encryptedDataKey)).not.toEqual(
      Buffer.from(hb.encryptedDataKeys[0]!.encryptedDataKey),
    );
    expect(a.message).not.toBe(b.message);
  });

  it('fails with any other expected encryption context', async () => {
    const sealed = await sealSecret(keyring, secret, context);
    for (const other of [
      { ...context, clientId: 'c2' },
      { ...context, organizationId: 'o2' },
      { ...context, field: 'totpSecret' },
      { ...context, extra: 'x' },
      { purpose: context.purpose, clientId: 'c1', organizationId: 'o1' },
    ]) {
      await expect(openSecret(keyring, sealed, other)).rejects.toBeInstanceOf(SecretDecryptionError);
    }
  });

  it('refuses a valid message whose stored context holds more than was expected', async () => {
    // Sealed with an extra entry, opened expecting the subset: the SDK alone would accept it.
    const sealed = await sealSecret(keyring, secret, { ...context, portalAccountId: 'acc-9' });
    await expect(openSecret(keyring, sealed, context)).rejects.toBeInstanceOf(SecretDecryptionError);
  });

  it('refuses an SDK message of another suite: the signing suite adds its own context key', async () => {
    const { encrypt } = buildEncrypt(CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT);
    const { result, messageHeader } = await encrypt(keyring.encryptionSdkKeyring().keyring, secret, {
      encryptionContext: context,
      suiteId: AlgorithmSuiteIdentifier.ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY_ECDSA_P384,
    });
    expect(Object.keys(messageHeader.encryptionContext)).toContain('aws-crypto-public-key');
    const signed = { v: 2 as const, keyring: 'local' as const, message: result.toString('base64') };
    await expect(openSecret(keyring, signed, context)).rejects.toBeInstanceOf(SecretDecryptionError);
  });

  it('fails when any byte of the message is altered, or it is cut short', async () => {
    const sealed = await sealSecret(keyring, secret, context);
    const bytes = Buffer.from(sealed.message, 'base64');
    for (const at of [0, 1, 20, Math.floor(bytes.length / 2), bytes.length - 1]) {
      const altered = Buffer.from(bytes);
      altered[at]! ^= 1;
      await expect(
        openSecret(keyring, { ...sealed, message: altered.toString('base64') }, context),
      ).rejects.toBeInstanceOf(SecretDecryptionError);
    }
    const short = bytes.subarray(0, bytes.length - 10).toString('base64');
    await expect(openSecret(keyring, { ...sealed, message: short }, context)).rejects.toBeInstanceOf(
      SecretDecryptionError,
    );
    for (const wrongShape of [
      { ...sealed, keyring: 'kms' as const },
      { ...sealed, v: 3 },
      { v: 2, keyring: 'local' },
    ]) {
      await expect(openSecret(keyring, wrongShape as SealedSecretV2, context)).rejects.toBeInstanceOf(
        SecretDecryptionError,
      );
    }
  });

  it('fails with another local key', async () => {
    const sealed = await sealSecret(keyring, secret, context);
    const other = localKeyring(join(dir, 'other.key'));
    await expect(openSecret(other, sealed, context)).rejects.toBeInstanceOf(SecretDecryptionError);
  });

  it("opens what the keyring sealed with the SDK's default context order (localeCompare) before utf8Sorting", async () => {
    const file = join(dir, 'sorting.key');
    const key = loadOrCreateKeyFile(file);
    const localeSorted = new RawAesKeyringNode({
      keyNamespace: KEY_NAMESPACE,
      keyName: localKeyIdOf(key),
      unencryptedMasterKey: Uint8Array.from(key),
      wrappingSuite: RawAesWrappingSuiteIdentifier.AES256_GCM_IV12_TAG16_NO_PADDING,
    });
    const before: Keyring = {
      ...localKeyring(file),
      encryptionSdkKeyring: () => ({ keyring: localeSorted, transientFailure: () => undefined }),
    };
    const accountContext = encryptionContextOf(v1Ref, 'password');
    const sealed = await sealSecret(before, secret, accountContext);
    expect(await openSecret(localKeyring(file), sealed, accountContext)).toBe(secret);
  });
});

describe('v1 envelopes (sealed before the Encryption SDK)', () => {
  it('still open: envelopes written by the v1 code, and ones sealed as it did', async () => {
    const keyring = localKeyring(v1KeyFile());
    expect(await openSecret(keyring, V1_LOCAL.password, encryptionContextOf(v1Ref, 'password'))).toBe('pw-1 ✓');
    expect(await openSecret(keyring, V1_LOCAL.totpSecret, encryptionContextOf(v1Ref, 'totpSecret'))).toBe(
      'JBSWY3DPEHPK3PXP',
    );
    const sealed = sealV1WithLocalKey(v1KeyFile(), secret, context);
    expect(await openSecret(keyring, sealed, context)).toBe(secret);
  });

  it('refuse another context, an altered part, a truncated tag, another key or keyring', async () => {
    const keyring = localKeyring(v1KeyFile());
    const sealed = V1_LOCAL.password;
    const own = encryptionContextOf(v1Ref, 'password');
    const flip = (b64: string) => {
      const bytes = Buffer.from(b64, 'base64');
      bytes[0]! ^= 1;
      return bytes.toString('base64');
    };
    for (const other of [encryptionContextOf(v1Ref, 'totpSecret'), { ...own, organizationId: 'o2' }]) {
      await expect(openSecret(keyring, sealed, other)).rejects.toBeInstanceOf(SecretDecryptionError);
    }
    for (const altered of [
      { ...sealed, ct: flip(sealed.ct) },
      { ...sealed, iv: flip(sealed.iv) },
      { ...sealed, tag: flip(sealed.tag) },
      { ...sealed, tag: Buffer.from(sealed.tag, 'base64').subarray(0, 4).toString('base64') },
      { ...sealed, edk: flip(sealed.edk) },
      { ...sealed, keyId: 'local:0000000000000000' },
      { ...sealed, keyring: 'kms' as const },
    ]) {
      await expect(openSecret(keyring, altered, own)).rejects.toBeInstanceOf(SecretDecryptionError);
    }
    await expect(openSecret(localKeyring(join(dir, 'other.key')), sealed, own)).rejects.toBeInstanceOf(
      SecretDecryptionError,
    );
  });
});

describe('envelope encryption with the KMS keyring', () => {
  const keyArn = 'arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';
  /** KMS compares contexts as sets of entries, in any order. */
  const sameContext = (entries: Record<string, string> | undefined) => canonicalContext(entries ?? {}).toString();
  /** A stand-in for KMS that checks what KMS checks: the same key and the same context. */
  const fakeKms = (issued = new Map<string, { plaintext: Buffer; context: string }>()) => {
    const sent: unknown[] = [];
    return {
      sent,
      send: async (command: unknown) => {
        sent.push(command);
        if (command instanceof GenerateDataKeyCommand) {
          const plaintext = randomBytes(command.input.NumberOfBytes ?? 32);
          const blob = Buffer.from(`blob-${issued.size}`);
          issued.set(blob.toString(), { plaintext, context: sameContext(command.input.EncryptionContext) });
          return { Plaintext: new Uint8Array(plaintext), CiphertextBlob: new Uint8Array(blob), KeyId: keyArn };
        }
        if (command instanceof DecryptCommand) {
          const found = issued.get(Buffer.from(command.input.CiphertextBlob!).toString());
          if (
            !found ||
            command.input.KeyId !== keyArn ||
            found.context !== sameContext(command.input.EncryptionContext)
          ) {
            throw Object.assign(new Error('invalid'), { name: 'InvalidCiphertextException' });
          }
          return { Plaintext: new Uint8Array(found.plaintext), KeyId: keyArn };
        }
        throw new Error('unexpected command');
      },
    };
  };

  it('asks KMS for a 256-bit data key with the context, and decrypts with the same context and key', async () => {
    const kms = fakeKms();
    const keyring = kmsKeyring(kms as never, keyArn);
    const sealed = await sealSecret(keyring, secret, context);
    expect(sealed).toMatchObject({ v: 2, keyring: 'kms' });
    const generate = kms.sent[0] as GenerateDataKeyCommand;
    expect(generate.input).toMatchObject({ KeyId: keyArn, NumberOfBytes: 32, EncryptionContext: context });
    expect(generate.input.EncryptionContext).toEqual(context);
    expect(await openSecret(keyring, sealed, context)).toBe(secret);
    const decrypt = kms.sent[1] as DecryptCommand;
    expect(decrypt.input).toMatchObject({ KeyId: keyArn, EncryptionContext: context });
    expect(kms.sent.map((command) => (command as object).constructor.name)).toEqual([
      'GenerateDataKeyCommand',
      'DecryptCommand',
    ]);
  });

  it('turns a KMS refusal (wrong context) into SecretDecryptionError and passes transient errors on', async () => {
    const kms = fakeKms();
    const keyring = kmsKeyring(kms as never, keyArn);
    const sealed = await sealSecret(keyring, secret, context);
    await expect(openSecret(keyring, sealed, { ...context, organizationId: 'o2' })).rejects.toBeInstanceOf(
      SecretDecryptionError,
    );
    const throttled = kmsKeyring(
      { send: async () => Promise.reject(Object.assign(new Error('slow down'), { name: 'ThrottlingException' })) },
      keyArn,
    );
    await expect(openSecret(throttled, sealed, context)).rejects.toMatchObject({ name: 'ThrottlingException' });
  });

  it('still opens a v1 envelope sealed through GenerateDataKey before the Encryption SDK', async () => {
    // Written by the v1 code with KMS answering this data key for this wrapped blob.
    const v1 = {
      v: 1,
      alg: 'AES-256-GCM',
      keyring: 'kms',
      keyId: keyArn,
      edk: 'a21zLXdyYXBwZWQtdjEtZGF0YS1rZXk=',
      iv: 'RxK0rWaQAWbjp58s',
      ct: '+ucvPIka22w=',
      tag: 'cYsVCXKMBNP3Qzzz91w3kQ==',
    } as const;
    const own = encryptionContextOf(v1Ref, 'password');
    const kms = fakeKms(
      new Map([['kms-wrapped-v1-data-key', { plaintext: Buffer.alloc(32, 0x5a), context: sameContext(own) }]]),
    );
    const keyring = kmsKeyring(kms as never, keyArn);
    expect(await openSecret(keyring, v1, own)).toBe('pw-1 ✓');
    await expect(openSecret(keyring, v1, { ...own, field: 'totpSecret' })).rejects.toBeInstanceOf(
      SecretDecryptionError,
    );
  });
});

describe('key configuration', () => {
  it('chooses KMS when SECRETS_KEY_ID is set, else a local key file, else refuses', () => {
    expect(keyringFromEnvironment({ SECRETS_KEY_ID: 'alias/x', LOCAL_STATE_DIR: dir }).kind).toBe('kms');
    expect(keyringFromEnvironment({ LOCAL_STATE_DIR: dir }).kind).toBe('local');
    expect(keyringFromEnvironment({ LOCAL_SECRETS_KEY_FILE: join(dir, 'explicit.key') }).kind).toBe('local');
    expect(() => keyringFromEnvironment({})).toThrow(KeyConfigurationError);
  });

  it('reads cursor keys from CURSOR_SIGNING_KEY (rotation list) or a local file, else refuses', async () => {
    const a = Buffer.alloc(32, 7).toString('base64url');
    const b = Buffer.alloc(48, 9).toString('base64');
    expect((await cursorKeysFromEnvironment({ CURSOR_SIGNING_KEY: `${a},${b}` })).map((k) => k.length)).toEqual([
      32, 48,
    ]);
    await expect(cursorKeysFromEnvironment({ CURSOR_SIGNING_KEY: 'c2hvcnQ=' })).rejects.toThrow(KeyConfigurationError);
    const [local] = await cursorKeysFromEnvironment({ LOCAL_STATE_DIR: dir });
    expect(local).toHaveLength(32);
    expect(readFileSync(join(dir, 'cursor.key'), 'utf8').trim()).toBe(local!.toString('base64'));
    await expect(cursorKeysFromEnvironment({})).rejects.toThrow(KeyConfigurationError);
  });
});

describe('portal-account credentials', () => {
  const keyring = localKeyring(join(dir, 'credentials.key'));
  const ref = { clientId: 'c1', organizationId: 'o1', externalId: 'acc-1' };

  it('binds client, organization, account and field in the encryption context', () => {
    expect(encryptionContextOf(ref, 'totpSecret')).toEqual({
      purpose: 'portal-account-credential',
      clientId: 'c1',
      organizationId: 'o1',
      portalAccountId: 'acc-1',
      field: 'totpSecret',
    });
  });

  it('opens the credentials of a stored account for the RPA worker, and refuses swapped or moved ciphertexts', async () => {
    const account = {
      ...ref,
      username: 'jdoe',
      password: await sealCredential(keyring, ref, 'password', 'pw-1'),
      totpSecret: await sealCredential(keyring, ref, 'totpSecret', 'JBSWY3DPEHPK3PXP'),
    } as StoredPortalAccount;
    expect(await openPortalCredentials(account, keyring)).toEqual({
      username: 'jdoe',
      password: 'pw-1',
      totpSecret: 'JBSWY3DPEHPK3PXP',
    });
    const swapped = { ...account, password: account.totpSecret! };
    await expect(openPortalCredentials(swapped, keyring)).rejects.toBeInstanceOf(SecretDecryptionError);
    const moved = { ...account, organizationId: 'o2' };
    await expect(openPortalCredentials(moved, keyring)).rejects.toBeInstanceOf(SecretDecryptionError);
    const copied = { ...account, externalId: 'acc-2' };
    await expect(openPortalCredentials(copied, keyring)).rejects.toBeInstanceOf(SecretDecryptionError);
  });
});
