import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { openPortalCredentials } from '#lib/portal-accounts/open-credentials';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { sfnExecutionReader } from '#lib/runs/sfn-execution-reader';
import { runCredentialsIssuer } from './run-credentials.ts';

/**
 * The run credentials function's logic on DynamoDB, Step Functions (the executions it checks) and the
 * secrets keyring (KMS on AWS), built once per cold start: the only bundle with the Encryption SDK's
 * decrypt side (no browser, no driver).
 */
export const runCredentials = runCredentialsIssuer({
  runs: dynamoRunStore,
  accounts: dynamoPortalAccountStore,
  executions: sfnExecutionReader,
  open: (account) => openPortalCredentials(account),
});
