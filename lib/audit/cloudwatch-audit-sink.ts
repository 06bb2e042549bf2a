import { randomUUID } from 'node:crypto';
import type { CloudWatchLogsWriter } from '#lib/aws/cloudwatch-logs';
import type { AuditEvent, AuditSink } from './audit-sink.ts';

/**
 * The deployed audit trail: the dedicated, KMS-encrypted audit log group (infra: AuditLog), one
 * log stream per function instance, created on its first event. Functions may only create streams
 * and put events there, so what is written cannot be changed or deleted by them; retention and
 * removal are the log group's (docs/security.md, "Audit trail").
 */
export const cloudWatchAuditSink = (
  logs: CloudWatchLogsWriter,
  logGroupName: string,
  instanceName = process.env.AWS_LAMBDA_FUNCTION_NAME ?? 'service-review',
): AuditSink => {
  // One stream per instance: an instance handles one request at a time, so its events stay in order.
  const logStreamName = `${new Date().toISOString().slice(0, 10)}/${instanceName}/${randomUUID()}`;
  let stream: Promise<void> | undefined;
  const createStream = async () => {
    try {
      await logs.createLogStream({ logGroupName, logStreamName });
    } catch (error) {
      // Created by an earlier attempt whose answer was lost: the stream is ours all the same.
      if ((error as Error).name !== 'ResourceAlreadyExistsException') throw error;
    }
  };
  return {
    write: async (event: AuditEvent) => {
      stream ??= createStream().catch((error: unknown) => {
        stream = undefined; // try again with the next event
        throw error;
      });
      await stream;
      const { rejectedLogEventsInfo } = await logs.putLogEvents({
        logGroupName,
        logStreamName,
        logEvents: [{ timestamp: Date.parse(event.time), message: JSON.stringify(event) }],
      });
      // An answer of 200 may still refuse the event (its timestamp out of the accepted range): not stored.
      if (Object.values(rejectedLogEventsInfo ?? {}).some((index) => index != null))
        throw new Error('CloudWatch Logs rejected the audit event');
    },
  };
};
