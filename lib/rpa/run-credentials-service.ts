import { dynamoPortalAccountStore } from '#lib/portal-accounts/dynamo-portal-account-store';
import { openPortalCredentials } from '#lib/portal-accounts/open-credentials';
import { dynamoRunStore } from './dynamo-run-store.ts';
import { runCredentialsIssuer } from './run-credentials.ts';

/**
 * The run credentials function's logic on DynamoDB and the secrets keyring (KMS on AWS), built once
 * per cold start: the only bundle with the Encryption SDK's decrypt side (no browser, no driver).
 */
export const runCredentials = runCredentialsIssuer({
  runs: dynamoRunStore,
  accounts: dynamoPortalAccountStore,
  open: (account) => openPortalCredentials(account),
});
