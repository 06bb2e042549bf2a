import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildDecrypt } from '@aws-crypto/decrypt-node';
import { buildEncrypt } from '@aws-crypto/encrypt-node';
import { AlgorithmSuiteIdentifier } from '@aws-crypto/material-management-node';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { CLIENT_OPTIONS } from '#lib/crypto/envelope';
import { localKeyring } from '#lib/crypto/local-keyring';
import { openSecret } from '#lib/crypto/open';
import { sealSecret } from '#lib/crypto/seal';
import { sealV1WithLocalKey } from '#test/support/legacy-envelope';
import { bundleFunction, deployedBuildOptions } from '../../bench/function-bundle.ts';

/*
 * The Encryption SDK as deployed: a bundle built as CDK builds it, with the SDK as published (no
 * package inside it swapped), seals and opens (and refuses) exactly as the unbundled SDK does, and its
 * signing path works: it signs and verifies ECDSA P-384 messages (asn1.js encodes the keys as PEM), even
 * though openSecret accepts only the pinned unsigned suite.
 */
const dir = mkdtempSync(join(tmpdir(), 'crypto-bundle-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const context = { purpose: 'portal-account-credential', clientId: 'c1', organizationId: 'o1', field: 'password' };
const secret = 'correct horse battery staple ✓';
const SIGNED_SUITE = AlgorithmSuiteIdentifier.ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY_ECDSA_P384;
const asPublished = /node_modules\/(asn1\.js|readable-stream)\//;

/** Flips one bit of a message's last byte: a signed message ends with its signature. */
const withAlteredEnd = (message: Buffer) => {
  const altered = Buffer.from(message);
  altered[altered.length - 1]! ^= 1;
  return altered;
};

// Resolved from the project (esbuild's stdin resolveDir), so that its bare imports find node_modules.
const bundleEntry = `
import { buildDecrypt } from '@aws-crypto/decrypt-node';
import { buildEncrypt } from '@aws-crypto/encrypt-node';
import { CLIENT_OPTIONS } from './lib/crypto/envelope.ts';
import { localKeyring } from './lib/crypto/local-keyring.ts';
import { openSecret } from './lib/crypto/open.ts';
import { sealSecret } from './lib/crypto/seal.ts';
const input = JSON.parse(process.env.INPUT);
const keyring = localKeyring(input.keyFile);
const sdkKeyring = keyring.encryptionSdkKeyring().keyring;
const { decrypt } = buildDecrypt(CLIENT_OPTIONS);
const { encrypt } = buildEncrypt(CLIENT_OPTIONS);
const outcome = async (open) => { try { return { opened: await open() }; } catch (error) { return { refused: error.name, message: error.message }; } };
const sdkOpen = async (base64) => {
  const { plaintext, messageHeader } = await decrypt(sdkKeyring, Buffer.from(base64, 'base64'));
  return { plaintext: plaintext.toString('utf8'), suiteId: messageHeader.suiteId };
};
const sealed = await sealSecret(keyring, input.secret, input.context);
const altered = Buffer.from(sealed.message, 'base64');
altered[altered.length - 20] ^= 1;
// Signing encodes the signature key as PEM (asn1.js): an outcome, so that a failure reads as one.
const signedHere = await outcome(async () =>
  (await encrypt(sdkKeyring, input.secret, { encryptionContext: input.context, suiteId: input.signedSuite })).result.toString('base64'));
process.stdout.write(JSON.stringify({
  sealed,
  signedHere,
  roundTrip: await outcome(() => openSecret(keyring, sealed, input.context)),
  otherContext: await outcome(() => openSecret(keyring, sealed, { ...input.context, clientId: 'c2' })),
  altered: await outcome(() => openSecret(keyring, { ...sealed, message: altered.toString('base64') }, input.context)),
  truncated: await outcome(() => openSecret(keyring, { ...sealed, message: sealed.message.slice(0, -16) }, input.context)),
  sealedUnbundled: await outcome(() => openSecret(keyring, input.sealedUnbundled, input.context)),
  signed: await outcome(() => openSecret(keyring, { v: 2, keyring: 'local', message: input.signed }, input.context)),
  v1: await outcome(() => openSecret(keyring, input.v1, input.context)),
  sdkSigned: await outcome(() => sdkOpen(input.signed)),
  sdkSignedAltered: await outcome(() => sdkOpen(input.signedAltered)),
  sdkSignedHere: await outcome(() => sdkOpen(signedHere.opened)),
}));
`;

describe('the Encryption SDK in a deployed bundle, as published', () => {
  it('seals and opens like the unbundled SDK, refuses the same, and signs and verifies signed messages', async () => {
    const outfile = join(dir, 'seal-open.mjs');
    const result = await build({
      ...deployedBuildOptions(),
      stdin: { contents: bundleEntry, resolveDir: process.cwd(), sourcefile: 'seal-open.ts', loader: 'ts' },
      outfile,
      metafile: true,
      logLevel: 'error',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.some((input) => /node_modules\/asn1\.js\//.test(input))).toBe(true);
    expect(inputs.some((input) => /node_modules\/readable-stream\//.test(input))).toBe(true);

    const keyFile = join(dir, 'secrets.key');
    const keyring = localKeyring(keyFile);
    const sdkKeyring = keyring.encryptionSdkKeyring().keyring;
    const { encrypt } = buildEncrypt(CLIENT_OPTIONS);
    const signed = (await encrypt(sdkKeyring, secret, { encryptionContext: context, suiteId: SIGNED_SUITE })).result;
    const input = {
      keyFile,
      secret,
      context,
      signedSuite: SIGNED_SUITE,
      sealedUnbundled: await sealSecret(keyring, secret, context),
      signed: signed.toString('base64'),
      signedAltered: withAlteredEnd(signed).toString('base64'),
      v1: sealV1WithLocalKey(keyFile, secret, context),
    };
    const out = JSON.parse(
      execFileSync(process.execPath, [outfile], { env: { ...process.env, INPUT: JSON.stringify(input) } }).toString(),
    );

    const refused = { refused: 'SecretDecryptionError' };
    expect(out).toMatchObject({
      roundTrip: { opened: secret },
      otherContext: refused,
      altered: refused,
      truncated: refused,
      sealedUnbundled: { opened: secret },
      // Still refused: the suite is pinned to the unsigned one (lib/crypto/envelope.ts), not for want of ASN.1.
      signed: refused,
      v1: { opened: secret },
      // The bundled SDK itself verifies a signature made outside the bundle, and refuses an altered one.
      sdkSigned: { opened: { plaintext: secret, suiteId: SIGNED_SUITE } },
      sdkSignedAltered: { message: 'Invalid Signature' },
      signedHere: { opened: expect.any(String) },
      sdkSignedHere: { opened: { plaintext: secret, suiteId: SIGNED_SUITE } },
    });
    // What the bundle sealed opens with the SDK as installed; what it signed verifies there too.
    expect(await openSecret(keyring, out.sealed, context)).toBe(secret);
    const { decrypt } = buildDecrypt(CLIENT_OPTIONS);
    const verified = await decrypt(sdkKeyring, Buffer.from(out.signedHere.opened, 'base64'));
    expect(verified.plaintext.toString('utf8')).toBe(secret);
    expect(verified.messageHeader.suiteId).toBe(SIGNED_SUITE);
    await expect(decrypt(sdkKeyring, withAlteredEnd(Buffer.from(out.signedHere.opened, 'base64')))).rejects.toThrow(
      'Invalid Signature',
    );
  });

  it('each side bundles its half of the SDK, with its dependencies as published', async () => {
    for (const [handler, side, other] of [
      ['portal-accounts/create-portal-account', 'encrypt-node', 'decrypt-node'],
      ['rpa/issue-run-credentials', 'decrypt-node', 'encrypt-node'],
    ] as const) {
      const { metafile } = await bundleFunction(handler);
      const inputs = Object.keys(metafile.inputs);
      expect(inputs.filter((input) => asPublished.test(input)).length, handler).toBeGreaterThan(0);
      expect(
        inputs.filter((input) => input.startsWith('lib/crypto/bundle-')),
        handler,
      ).toEqual([]);
      expect(inputs.some((input) => input.includes(`@aws-crypto/${side}/`))).toBe(true);
      expect(inputs.some((input) => input.includes(`@aws-crypto/${other}/`))).toBe(false);
    }
  });
});
