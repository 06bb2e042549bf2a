import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DecryptCommand, GenerateDataKeyCommand } from '@aws-sdk/client-kms';
import { afterAll, describe, expect, it } from 'vitest';
import { cursorKeysFromEnvironment, KeyConfigurationError, keyringFromEnvironment } from '#lib/crypto/config';
import { openSecret, sealSecret } from '#lib/crypto/envelope';
import { loadOrCreateKeyFile } from '#lib/crypto/key-file';
import { SecretDecryptionError } from '#lib/crypto/keyring';
import { kmsKeyring } from '#lib/crypto/kms-keyring';
import { localKeyring } from '#lib/crypto/local-keyring';
import { encryptionContextOf, openPortalCredentials, sealCredential } from '#lib/portal-accounts/credentials';
import type { StoredPortalAccount } from '#lib/portal-accounts/portal-account-store';

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

describe('envelope encryption with the local keyring', () => {
  const keyring = localKeyring(join(dir, 'envelope.key'));

  it('round-trips a secret; the sealed form holds neither the secret nor the data key in clear', async () => {
    const sealed = await sealSecret(keyring, secret, context);
    expect(sealed).toMatchObject({ v: 1, alg: 'AES-256-GCM', keyring: 'local' });
    expect(sealed.keyId).toMatch(/^local:[0-9a-f]{16}$/);
    expect(JSON.stringify(sealed)).not.toContain(Buffer.from(secret).toString('base64'));
    expect(await openSecret(keyring, sealed, context)).toBe(secret);
  });

  it('uses a fresh data key and IV for every secret', async () => {
    const [a, b] = await Promise.all([sealSecret(keyring, secret, context), sealSecret(keyring, secret, context)]);
    expect(a.edk).not.toBe(b.edk);
    expect(a.iv).not.toBe(b.iv);
    expect(a.ct).not.toBe(b.ct);
  });

  it('fails with any other encryption context', async () => {
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

  it('fails when any part of the sealed secret is altered or the tag is truncated', async () => {
    const sealed = await sealSecret(keyring, secret, context);
    const flip = (b64: string) => {
      const bytes = Buffer.from(b64, 'base64');
      bytes[0]! ^= 1;
      return bytes.toString('base64');
    };
    for (const altered of [
      { ...sealed, ct: flip(sealed.ct) },
      { ...sealed, iv: flip(sealed.iv) },
      { ...sealed, tag: flip(sealed.tag) },
      { ...sealed, tag: Buffer.from(sealed.tag, 'base64').subarray(0, 4).toString('base64') },
      { ...sealed, edk: flip(sealed.edk) },
      { ...sealed, keyId: 'local:0000000000000000' },
      { ...sealed, keyring: 'kms' as const },
    ]) {
      await expect(openSecret(keyring, altered, context)).rejects.toBeInstanceOf(SecretDecryptionError);
    }
  });

  it('fails with another local key', async () => {
    const sealed = await sealSecret(keyring, secret, context);
    const other = localKeyring(join(dir, 'other.key'));
    await expect(openSecret(other, sealed, context)).rejects.toBeInstanceOf(SecretDecryptionError);
  });
});

describe('envelope encryption with the KMS keyring', () => {
  const keyArn = 'arn:aws:kms:us-east-1:111122223333:key/1234abcd-12ab-34cd-56ef-1234567890ab';
  /** A stand-in for KMS that checks what KMS checks: the same key and the same context. */
  const fakeKms = () => {
    const sent: unknown[] = [];
    const issued = new Map<string, { plaintext: Buffer; context: string }>();
    return {
      sent,
      send: async (command: unknown) => {
        sent.push(command);
        if (command instanceof GenerateDataKeyCommand) {
          const plaintext = Buffer.alloc(32, issued.size + 1);
          const blob = Buffer.from(`blob-${issued.size}`);
          issued.set(blob.toString(), { plaintext, context: JSON.stringify(command.input.EncryptionContext) });
          return { Plaintext: new Uint8Array(plaintext), CiphertextBlob: new Uint8Array(blob), KeyId: keyArn };
        }
        if (command instanceof DecryptCommand) {
          const found = issued.get(Buffer.from(command.input.CiphertextBlob!).toString());
          if (!found || found.context !== JSON.stringify(command.input.EncryptionContext)) {
            throw Object.assign(new Error('invalid'), { name: 'InvalidCiphertextException' });
          }
          return { Plaintext: new Uint8Array(found.plaintext), KeyId: keyArn };
        }
        throw new Error('unexpected command');
      },
    };
  };

  it('asks KMS for an AES-256 data key with the encryption context, and decrypts with the same context and key', async () => {
    const kms = fakeKms();
    const keyring = kmsKeyring(kms as never, 'alias/portal-secrets');
    const sealed = await sealSecret(keyring, secret, context);
    expect(sealed).toMatchObject({ keyring: 'kms', keyId: keyArn });
    const generate = kms.sent[0] as GenerateDataKeyCommand;
    expect(generate.input).toEqual({ KeyId: 'alias/portal-secrets', KeySpec: 'AES_256', EncryptionContext: context });
    expect(await openSecret(keyring, sealed, context)).toBe(secret);
    const decrypt = kms.sent[1] as DecryptCommand;
    expect(decrypt.input).toMatchObject({ KeyId: keyArn, EncryptionContext: context });
  });

  it('turns a KMS refusal (wrong context) into SecretDecryptionError and passes other errors on', async () => {
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
