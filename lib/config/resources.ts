import { environment } from './environment.ts';

/*
 * Names of deployed resources, injected as environment variables by the CDK construct (or the local
 * stack). Required when used, not at cold start: each function gets only the variables its route
 * access binds (infra/constructs/route-access.ts), so a function that never touches the bucket has
 * no BUCKET_NAME. Read on every use (environment.ts says why).
 */
const required = (name: string): string => {
  const value = environment()[name];
  if (!value) throw new Error(`Environment variable ${name} is not set`);
  return value;
};

export const tableName = () => required('TABLE_NAME');
export const bucketName = () => required('BUCKET_NAME');

/** The automation's state machines (lib/runs/state-machines.ts), bound by the `automation` route access. */
export const viewOnPageStateMachineArn = () => required('VIEW_ON_PAGE_STATE_MACHINE_ARN');
export const checkAuthStatusStateMachineArn = () => required('CHECK_AUTH_STATUS_STATE_MACHINE_ARN');
export const submitToPayerStateMachineArn = () => required('SUBMIT_TO_PAYER_STATE_MACHINE_ARN');

/** The run credentials function (`invokedFunctions` in lib/routes/automation-tasks.ts), bound by the browser workers' `invoke` access. */
export const runCredentialsFunctionName = () => required('RUN_CREDENTIALS_FUNCTION_NAME');
export const payerTokenFunctionName = () => required('PAYER_TOKEN_FUNCTION_NAME');

/**
 * The API's public base URL (no trailing slash needed), which payers reach our notification route at
 * (docs/payer-api.md, "Subscriptions"): a deployment's stable address, from CDK context `publicApiBaseUrl`;
 * locally the gateway's URL. Unset: no subscription is made and the re-checks alone read pended results.
 */
export const publicApiBaseUrl = (): string | undefined => environment().PUBLIC_API_BASE_URL || undefined;
