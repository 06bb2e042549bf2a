import { closeSync, fstatSync, openSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { type Env, environment } from '#lib/config/environment';

export const AUDIT_FILE_NAME = 'audit.jsonl';

/**
 * The local copy of the audit lines: LOCAL_AUDIT_FILE, else $LOCAL_STATE_DIR/audit.jsonl (the local
 * stack sets it: `.local/` for `npm start`, a scratch folder for the tests). Neither is set on AWS,
 * where stdout is the trail.
 */
export const localAuditFileOf = (env: Env = environment()): string | undefined =>
  env.LOCAL_AUDIT_FILE || (env.LOCAL_STATE_DIR ? join(env.LOCAL_STATE_DIR, AUDIT_FILE_NAME) : undefined);

const open = new Map<string, number>();

/** The file's descriptor, opened once in append mode, only its owner may read (0600); again if deleted. */
const descriptorOf = (path: string) => {
  const fd = open.get(path);
  if (fd !== undefined) {
    if (fstatSync(fd).nlink > 0) return fd;
    closeSync(fd);
  }
  const opened = openSync(path, 'a', 0o600);
  open.set(path, opened);
  return opened;
};

/**
 * Appends one line. Synchronous, one write(2) with O_APPEND: concurrent handlers of the local stack
 * never interleave their lines, the intent is in the file before the handler runs, and the line is
 * there even if the process dies right after.
 */
export const appendAuditLine = (path: string, line: string) => {
  writeSync(descriptorOf(path), `${line}\n`);
};
