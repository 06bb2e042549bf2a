import { appendFile } from 'node:fs/promises';
import type { AuditEvent, AuditSink } from './audit-sink.ts';

/**
 * The local stack's audit trail: one JSON line per event, appended (flag `a`) to a file only its
 * owner may read (0600, set when the file is created). A single appendFile of one line is one
 * write(2) under O_APPEND, so concurrent handlers never interleave their lines.
 */
export const fileAuditSink = (path: string): AuditSink => ({
  write: (event: AuditEvent) => appendFile(path, `${JSON.stringify(event)}\n`, { flag: 'a', mode: 0o600 }),
});
