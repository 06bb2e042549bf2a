import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildEncrypt } from '@aws-crypto/encrypt-node';
import { AlgorithmSuiteIdentifier, CommitmentPolicy } from '@aws-crypto/material-management-node';
import { build } from 'esbuild';
import { afterAll, describe, expect, it } from 'vitest';
import { localKeyring } from '#lib/crypto/local-keyring';
import { openSecret } from '#lib/crypto/open';
import { sealSecret } from '#lib/crypto/seal';
import { sealV1WithLocalKey } from '#test/support/legacy-envelope';
import { bundleFunction, deployedBuildOptions } from '../../bench/function-bundle.ts';

/*
 * The stand-ins lib/crypto/bundle-aliases.ts puts in place of readable-stream and asn1.js:
 * a bundle built as CDK builds it, with the aliases, seals and opens (and refuses) exactly as the
 * unbundled SDK does.
 */
const dir = mkdtempSync(join(tmpdir(), 'crypto-shims-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const context = { purpose: 'portal-account-credential', clientId: 'c1', organizationId: 'o1', field: 'password' };
const secret = 'correct horse battery staple ✓';
const shimmed = /node_modules\/(asn1\.js|readable-stream)\//;

const bundleEntry = `
import { localKeyring } from '${process.cwd()}/lib/crypto/local-keyring.ts';
import { openSecret } from '${process.cwd()}/lib/crypto/open.ts';
import { sealSecret } from '${process.cwd()}/lib/crypto/seal.ts';
const input = JSON.parse(process.env.INPUT);
const keyring = localKeyring(input.keyFile);
const outcome = async (open) => { try { return { opened: await open() }; } catch (error) { return { refused: error.name }; } };
const sealed = await sealSecret(keyring, input.secret, input.context);
const altered = Buffer.from(sealed.message, 'base64');
altered[altered.length - 20] ^= 1;
process.stdout.write(JSON.stringify({
  sealed,
  roundTrip: await outcome(() => openSecret(keyring, sealed, input.context)),
  otherContext: await outcome(() => openSecret(keyring, sealed, { ...input.context, clientId: 'c2' })),
  altered: await outcome(() => openSecret(keyring, { ...sealed, message: altered.toString('base64') }, input.context)),
  truncated: await outcome(() => openSecret(keyring, { ...sealed, message: sealed.message.slice(0, -16) }, input.context)),
  sealedUnbundled: await outcome(() => openSecret(keyring, input.sealedUnbundled, input.context)),
  signed: await outcome(() => openSecret(keyring, input.signed, input.context)),
  v1: await outcome(() => openSecret(keyring, input.v1, input.context)),
}));
`;

describe('Encryption SDK bundle stand-ins (lib/crypto/bundle-aliases.ts)', () => {
  it('a bundle built as CDK builds it, with the aliases, seals and opens like the SDK, and refuses the same', async () => {
    const entry = join(dir, 'entry.ts');
    writeFileSync(entry, bundleEntry);
    const outfile = join(dir, 'seal-open.mjs');
    const result = await build({
      ...deployedBuildOptions(),
      entryPoints: [entry],
      outfile,
      metafile: true,
      logLevel: 'error',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((input) => shimmed.test(input))).toEqual([]);
    expect(inputs).toContain('lib/crypto/bundle-shims/readable-stream.cjs');

    const keyFile = join(dir, 'secrets.key');
    const keyring = localKeyring(keyFile);
    const { encrypt } = buildEncrypt(CommitmentPolicy.REQUIRE_ENCRYPT_REQUIRE_DECRYPT);
    const signed = await encrypt(keyring.encryptionSdkKeyring().keyring, secret, {
      encryptionContext: context,
      suiteId: AlgorithmSuiteIdentifier.ALG_AES256_GCM_IV12_TAG16_HKDF_SHA512_COMMIT_KEY_ECDSA_P384,
    });
    const input = {
      keyFile,
      secret,
      context,
      sealedUnbundled: await sealSecret(keyring, secret, context),
      signed: { v: 2, keyring: 'local', message: signed.result.toString('base64') },
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
      signed: refused,
      v1: { opened: secret },
    });
    // What the bundle sealed opens with the SDK as installed.
    expect(await openSecret(keyring, out.sealed, context)).toBe(secret);
  });

  it('only the Encryption SDK (and duplexify, for it) imports the aliased packages; each side bundles its half', async () => {
    for (const [handler, side, other] of [
      ['portal-accounts/create-portal-account', 'encrypt-node', 'decrypt-node'],
      ['rpa/issue-run-credentials', 'decrypt-node', 'encrypt-node'],
    ] as const) {
      const { metafile } = await bundleFunction(handler, ['@sparticuz/chromium', 'playwright-core']);
      // Built as deployed, so with the aliases: the packages are gone, and only the SDK imports their stand-ins.
      expect(Object.keys(metafile.inputs).filter((input) => shimmed.test(input))).toEqual([]);
      const importers = Object.entries(metafile.inputs)
        .filter(([, input]) => input.imports.some((imported) => imported.path.startsWith('lib/crypto/bundle-shims/')))
        .map(([path]) => path);
      expect(importers.length).toBeGreaterThan(0);
      expect(importers.filter((path) => !/node_modules\/(@aws-crypto\/|duplexify\/)/.test(path))).toEqual([]);
      const inputs = Object.keys(metafile.inputs);
      expect(inputs.some((input) => input.includes(`@aws-crypto/${side}/`))).toBe(true);
      expect(inputs.some((input) => input.includes(`@aws-crypto/${other}/`))).toBe(false);
    }
  });
});
