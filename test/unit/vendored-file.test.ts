import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { checkIntegrity, ensureVendoredFile, type VendoredFile } from '#scripts/vendored-file';

/**
 * A package tarball made here, packed through npm as a local file spec (npm copies it as it is): the
 * same path as the registry's, without the network.
 */
const dir = mkdtempSync(join(tmpdir(), 'vendored-file-'));
const script = 'window.rendered = true;\n';
mkdirSync(join(dir, 'src', 'package', 'dist'), { recursive: true });
writeFileSync(join(dir, 'src', 'package', 'package.json'), '{"name":"renderer","version":"1.0.0"}');
writeFileSync(join(dir, 'src', 'package', 'dist', 'standalone.js'), script);
writeFileSync(join(dir, 'src', 'package', 'dist', 'other.js'), 'not wanted');
const tarball = join(dir, 'renderer-1.0.0.tgz');
execFileSync('tar', ['-czf', tarball, '-C', join(dir, 'src'), 'package']);

const pin: VendoredFile = {
  spec: tarball,
  integrity: `sha512-${createHash('sha512').update(readFileSync(tarball)).digest('base64')}`,
  path: 'package/dist/standalone.js',
  sha256: createHash('sha256').update(script).digest('hex'),
};

describe('a file out of a pinned npm tarball (scripts/vendored-file.ts)', () => {
  it('extracts only that file, then keeps it without fetching again, and replaces one that differs', async () => {
    const target = join(dir, 'out', 'api-reference.js');
    expect(await ensureVendoredFile(pin, target)).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe(script);
    expect(existsSync(join(dir, 'out', 'other.js'))).toBe(false);
    // The spec can no longer be fetched: a second run must not try.
    expect(await ensureVendoredFile({ ...pin, spec: join(dir, 'gone.tgz') }, target)).toBe(false);

    writeFileSync(target, 'window.tampered = true;\n');
    expect(await ensureVendoredFile(pin, target)).toBe(true);
    expect(readFileSync(target, 'utf8')).toBe(script);
  });

  it('refuses a tarball that is not the pinned one, and writes nothing', async () => {
    const target = join(dir, 'refused', 'api-reference.js');
    const otherIntegrity = `sha512-${createHash('sha512').update('another tarball').digest('base64')}`;
    await expect(ensureVendoredFile({ ...pin, integrity: otherIntegrity }, target)).rejects.toThrow(
      `Tarball integrity mismatch: expected ${otherIntegrity}, got ${pin.integrity}`,
    );
    expect(existsSync(target)).toBe(false);
  });

  it('refuses a file whose digest is not the pinned one, naming its digest for the pin', async () => {
    const target = join(dir, 'unpinned', 'api-reference.js');
    await expect(ensureVendoredFile({ ...pin, sha256: '0'.repeat(64) }, target)).rejects.toThrow(
      `package/dist/standalone.js of ${tarball} has SHA-256 ${pin.sha256}, pinned ${'0'.repeat(64)}: update the pin`,
    );
    expect(existsSync(target)).toBe(false);
  });

  it('says why it cannot fetch, and takes only sha512 integrities', async () => {
    await expect(ensureVendoredFile({ ...pin, spec: join(dir, 'missing.tgz') }, join(dir, 'x.js'))).rejects.toThrow(
      /^Could not fetch .*missing\.tgz through npm/,
    );
    expect(() => checkIntegrity(Buffer.from('x'), 'sha1-C+7Hteo/D9vJXQ3UfzxbwnXaijM=')).toThrow(
      'Expected a sha512 integrity, got sha1-C+7Hteo/D9vJXQ3UfzxbwnXaijM=',
    );
  });
});
