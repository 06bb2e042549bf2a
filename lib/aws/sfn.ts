import { SFNClient } from '@aws-sdk/client-sfn';
import { traced } from '#lib/observability/tracer';

/** Module-scope Step Functions client (starting and reading the automation's executions). */
export const sfn = traced(new SFNClient({}));
