import { CloudWatchLogsClient } from '@aws-sdk/client-cloudwatch-logs';

/** Module-scope CloudWatch Logs client (the audit trail's log group). */
export const cloudWatchLogs = new CloudWatchLogsClient({});
