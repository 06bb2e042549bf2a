import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';
import { traced } from '#lib/observability/tracer';

/** Module-scope CloudWatch Logs client (the audit trail's log group). */
export const cloudWatchLogs = traced(new CloudWatchLogsClient({}));
