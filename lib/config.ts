/** Names of deployed resources, injected as environment variables by the CDK construct (or the local stack). */
const required = (name: string): string => {
  const value = process.env[name];
  if (!value) throw new Error(`Environment variable ${name} is not set`);
  return value;
};

export const tableName = () => required('TABLE_NAME');
export const bucketName = () => required('BUCKET_NAME');
/**
 * Whether the attachments bucket's store refuses bytes that miss their declared SHA-256 and reports it
 * (S3 does: the default). The local stack sets `false` for its emulator (docs/attachments.md, "Verification").
 */
export const s3VerifiesChecksums = () => process.env.S3_VERIFIES_CHECKSUMS !== 'false';

/** The automation's state machines (lib/rpa/state-machines.ts), bound by the `automation` route access. */
export const viewOnPageStateMachineArn = () => required('VIEW_ON_PAGE_STATE_MACHINE_ARN');
export const checkAuthStatusStateMachineArn = () => required('CHECK_AUTH_STATUS_STATE_MACHINE_ARN');
