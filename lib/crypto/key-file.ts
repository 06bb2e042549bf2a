import { randomBytes } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

/**
 * A 256-bit key kept in a local file (base64, one line, mode 0600). Created on first use; several
 * processes racing to create it all end up with the same key, because the file appears atomically
 * (written under a temporary name, then hard-linked into place, which fails if it already exists).
 * Local development and tests only: on AWS keys live in KMS or in the function's configuration.
 */
const KEY_BYTES = 32;

const errorCode = (error: unknown) => (error as NodeJS.ErrnoException).code;

const readKey = (path: string): Buffer => {
  const { mode } = statSync(path);
  if (process.platform !== 'win32' && (mode & 0o077) !== 0) {
    throw new Error(`Key file ${path} is readable by other users; run: chmod 600 ${path}`);
  }
  const key = Buffer.from(readFileSync(path, 'utf8').trim(), 'base64');
  if (key.length !== KEY_BYTES) throw new Error(`Key file ${path} does not hold a ${KEY_BYTES * 8}-bit base64 key`);
  return key;
};

export const loadOrCreateKeyFile = (path: string): Buffer => {
  try {
    return readKey(path);
  } catch (error) {
    if (errorCode(error) !== 'ENOENT') throw error;
  }
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temporary = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  writeFileSync(temporary, `${randomBytes(KEY_BYTES).toString('base64')}\n`, { mode: 0o600, flag: 'wx' });
  try {
    linkSync(temporary, path);
  } catch (error) {
    if (errorCode(error) !== 'EEXIST') throw error;
  } finally {
    unlinkSync(temporary);
  }
  return readKey(path);
};
