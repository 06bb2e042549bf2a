import { SFNClient } from '@aws-sdk/client-sfn';
import { traced } from '#lib/observability/tracer';
import { lazyClient } from './lazy-client.ts';

/** Module-scope, created on first use, Step Functions client (starting and reading the automation's executions). */
export const sfn = lazyClient(() => traced(new SFNClient({})));
