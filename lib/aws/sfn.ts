import { SFNClient } from '@aws-sdk/client-sfn';

/** Module-scope Step Functions client (starting and reading the automation's executions). */
export const sfn = new SFNClient({});
