import { randomUUID } from 'node:crypto';
import { mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { exportJWK, exportPKCS8, generateKeyPair, importPKCS8, SignJWT } from 'jose';
import { PAYER_SIGNING_ALG } from '#lib/entities/payer-signing-keys';
import { assertionHeaderOf, type PayerKeyKeeper } from './key-keeper.ts';

/**
 * Keeper adapter for the local stack: each private key is a PKCS#8 PEM file (mode 0600, in a directory of
 * mode 0700) under the local state directory, as the local secrets and cursor keys are (lib/crypto/key-file.ts);
 * jose generates it and signs with it (SignJWT). Local development and tests only: on AWS keys live in KMS.
 * A key file's name is random; the table stores it as the key's `keyRef`, checked before it names a file.
 */
const KEY_FILE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.pem$/;

/** The folder, under the local state directory, that holds the keys. */
export const LOCAL_PAYER_KEYS_DIR = 'payer-signing-keys';

export const localKeyKeeper = (stateDir: string): PayerKeyKeeper => {
  const dir = join(stateDir, LOCAL_PAYER_KEYS_DIR);
  const pathOf = (keyRef: string) => {
    if (!KEY_FILE.test(keyRef)) throw new Error('Not a local payer signing key reference');
    return join(dir, keyRef);
  };
  const imported = new Map<string, Awaited<ReturnType<typeof importPKCS8>>>();
  const privateKeyOf = async (keyRef: string) => {
    const cached = imported.get(keyRef);
    if (cached) return cached;
    const path = pathOf(keyRef);
    if (process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0) {
      throw new Error(`Key file ${path} is readable by other users; run: chmod 600 ${path}`);
    }
    const key = await importPKCS8(readFileSync(path, 'utf8'), PAYER_SIGNING_ALG);
    imported.set(keyRef, key);
    return key;
  };

  return {
    kind: 'local',

    create: async () => {
      const { publicKey, privateKey } = await generateKeyPair(PAYER_SIGNING_ALG, { extractable: true });
      const keyRef = `${randomUUID()}.pem`;
      mkdirSync(dir, { recursive: true, mode: 0o700 });
      writeFileSync(pathOf(keyRef), await exportPKCS8(privateKey), { mode: 0o600, flag: 'wx' });
      const { kty, n, e } = await exportJWK(publicKey);
      if (kty !== 'RSA' || !n || !e) throw new Error('jose generated no RSA key');
      return { keyRef, publicJwk: { kty: 'RSA', n, e } };
    },

    signJwt: async (keyRef, kid, claims) =>
      new SignJWT(claims).setProtectedHeader(assertionHeaderOf(kid)).sign(await privateKeyOf(keyRef)),

    discard: async (keyRef) => {
      imported.delete(keyRef);
      rmSync(pathOf(keyRef), { force: true });
    },
  };
};
