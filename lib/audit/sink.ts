import { join } from 'node:path';
import type { AuditSink } from './audit-sink.ts';
import { fileAuditSink } from './file-audit-sink.ts';

type Env = Record<string, string | undefined>;

export const AUDIT_FILE_NAME = 'audit.jsonl';

/**
 * Where audit events go:
 *   AUDIT_LOG_GROUP (set by the CDK stack) → that CloudWatch Logs log group
 *   else LOCAL_AUDIT_FILE or $LOCAL_STATE_DIR/audit.jsonl (the local stack) → a JSON-lines file
 *   else none: every event is then logged as an error instead (lib/http/audit.ts), never dropped quietly.
 * The CloudWatch Logs writer is imported only where it is used, so local runs never construct it.
 */
export const auditSinkFromEnvironment = async (env: Env = process.env): Promise<AuditSink | undefined> => {
  if (env.AUDIT_LOG_GROUP) {
    const [{ cloudWatchAuditSink }, { cloudWatchLogs }] = await Promise.all([
      import('./cloudwatch-audit-sink.ts'),
      import('#lib/aws/cloudwatch-logs'),
    ]);
    return cloudWatchAuditSink(cloudWatchLogs, env.AUDIT_LOG_GROUP);
  }
  const file = env.LOCAL_AUDIT_FILE || (env.LOCAL_STATE_DIR ? join(env.LOCAL_STATE_DIR, AUDIT_FILE_NAME) : undefined);
  return file ? fileAuditSink(file) : undefined;
};
