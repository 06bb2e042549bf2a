import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { buildEncrypt } from '@aws-crypto/encrypt-node';
import { AlgorithmSuiteIdentifier, CommitmentPolicy } from '@aws-crypto/material-management-node';
import { build } from 'esbuild';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { ENCRYPTION_SDK_ALIASES } from '#lib/crypto/bundle-aliases';
import { localKeyring } from '#lib/crypto/local-keyring';
import { openSecret } from '#lib/crypto/open';
import { sealSecret } from '#lib/crypto/seal';
import { sealV1WithLocalKey } from '#test/support/legacy-envelope';
import { bundleFunction, deployedBuildOptions } from '../../bench/function-bundle.ts';

/*
 * The stand-ins lib/crypto/bundle-aliases.ts puts in place of readable-stream, bn.js and asn1.js:
 * a bundle built as CDK builds it, with the aliases, seals and opens (and refuses) exactly as the
 * unbundled SDK does, and the BigInt bn.js agrees with bn.js on every operation the SDK calls.
 */
const dir = mkdtempSync(join(tmpdir(), 'crypto-shims-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** What the SDK calls on bn.js. */
interface BigNumber {
  add(other: BigNumber): BigNumber;
  sub(other: BigNumber): BigNumber;
  mul(other: BigNumber): BigNumber;
  div(other: BigNumber): BigNumber;
  mod(other: BigNumber): BigNumber;
  pow(other: BigNumber): BigNumber;
  eq(other: BigNumber): boolean;
  bitLength(): number;
  toNumber(): number;
  toArray(endian: 'be', length: number): number[];
  toRed(context: unknown): BigNumber;
  redPow(exponent: BigNumber): BigNumber;
  fromRed(): BigNumber;
}
interface BigNumberClass {
  new (value: number | string | number[], base?: number, endian?: 'be'): BigNumber;
  mont(modulus: BigNumber): unknown;
}
const require = createRequire(import.meta.url);
const ShimBN = require('../../lib/crypto/bundle-shims/bn.cjs') as BigNumberClass;
// bn.js as the SDK resolves it (a dependency of @aws-crypto/serialize, not of the project).
const RealBN = createRequire(require.resolve('@aws-crypto/serialize'))('bn.js') as BigNumberClass;

const context = { purpose: 'portal-account-credential', clientId: 'c1', organizationId: 'o1', field: 'password' };
const secret = 'correct horse battery staple ✓';
const shimmed = /node_modules\/(bn\.js|asn1\.js|readable-stream)\//;

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
      alias: { ...ENCRYPTION_SDK_ALIASES },
      metafile: true,
      logLevel: 'error',
    });
    const inputs = Object.keys(result.metafile.inputs);
    expect(inputs.filter((input) => shimmed.test(input))).toEqual([]);
    expect(inputs).toContain('lib/crypto/bundle-shims/bn.cjs');

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
      ['rpa/fill-portal-form', 'decrypt-node', 'encrypt-node'],
    ] as const) {
      const { metafile } = await bundleFunction(handler, ['@sparticuz/chromium', 'playwright-core']);
      const importers = Object.entries(metafile.inputs)
        .filter(([path]) => !shimmed.test(path))
        .filter(([, input]) => input.imports.some((imported) => shimmed.test(imported.path)))
        .map(([path]) => path);
      expect(importers.length).toBeGreaterThan(0);
      expect(importers.filter((path) => !/node_modules\/(@aws-crypto\/|duplexify\/)/.test(path))).toEqual([]);
      const inputs = Object.keys(metafile.inputs);
      expect(inputs.some((input) => input.includes(`@aws-crypto/${side}/`))).toBe(true);
      expect(inputs.some((input) => input.includes(`@aws-crypto/${other}/`))).toBe(false);
    }
  });
});

describe('the bn.js stand-in agrees with bn.js', () => {
  const same = (shim: BigNumber, real: BigNumber, bytes: number) =>
    expect(shim.toArray('be', bytes)).toEqual(real.toArray('be', bytes));

  it("writes and reads a frame's 8-byte content length (all a suite without signature uses)", () => {
    fc.assert(
      fc.property(fc.maxSafeNat(), (length) => {
        expect(new ShimBN(length).toArray('be', 8)).toEqual(new RealBN(length).toArray('be', 8));
      }),
    );
    fc.assert(
      fc.property(fc.uint8Array({ minLength: 8, maxLength: 8 }), (bytes) => {
        const read = (BN: BigNumberClass) => {
          try {
            return new BN([...bytes], 16, 'be').toNumber();
          } catch {
            return 'over 53 bits';
          }
        };
        expect(read(ShimBN)).toEqual(read(RealBN));
      }),
    );
    expect(() => new ShimBN(2 ** 40).toArray('be', 4)).toThrow();
  });

  it("computes the elliptic-curve point arithmetic of the SDK's signing code (P-256 and P-384)", () => {
    const primes = [
      'FFFFFFFF00000001000000000000000000000000FFFFFFFFFFFFFFFFFFFFFFFF',
      'FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFFEFFFFFFFF0000000000000000FFFFFFFF',
    ];
    for (const hex of primes) {
      const bytes = hex.length / 2;
      const [shimP, realP] = [new ShimBN(hex, 16), new RealBN(hex, 16)];
      expect(shimP.bitLength()).toBe(realP.bitLength());
      const four = [new ShimBN(4), new RealBN(4)] as const;
      const [shimExp, realExp] = [shimP.add(new ShimBN(1)).div(four[0]), realP.add(new RealBN(1)).div(four[1])];
      same(shimExp, realExp, bytes);
      fc.assert(
        fc.property(fc.uint8Array({ minLength: bytes, maxLength: bytes }), (x) => {
          const shimX = new ShimBN([...x]);
          const realX = new RealBN([...x]);
          const shimAlpha = shimX
            .pow(new ShimBN(3))
            .mod(shimP)
            .add(shimX.mul(new ShimBN(7)))
            .mod(shimP);
          const realAlpha = realX
            .pow(new RealBN(3))
            .mod(realP)
            .add(realX.mul(new RealBN(7)))
            .mod(realP);
          same(shimAlpha, realAlpha, bytes);
          same(
            shimAlpha.toRed(ShimBN.mont(shimP)).redPow(shimExp).fromRed(),
            realAlpha.toRed(RealBN.mont(realP)).redPow(realExp).fromRed(),
            bytes,
          );
          same(shimP.sub(shimAlpha), realP.sub(realAlpha), bytes);
          expect(shimX.mod(new ShimBN(2)).eq(new ShimBN(1))).toBe(realX.mod(new RealBN(2)).eq(new RealBN(1)));
        }),
        { numRuns: 50 },
      );
    }
  });
});
