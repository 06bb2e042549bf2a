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

/** The run credentials function (`invokedFunctions` in lib/routes/automation-tasks.ts), bound by the browser workers' `invoke` access. */
export const runCredentialsFunctionName = () => required('RUN_CREDENTIALS_FUNCTION_NAME');

/**
 * Storage quotas (docs/security.md, "Quotas"): what one client may keep, unless the admin CLI gave it
 * its own (`set-storage-quotas`). Generous on purpose: they stop a runaway integration, not normal use.
 */
const STORAGE_QUOTA_DEFAULTS = {
  /** Sum of the declared sizes of a client's attachment records: 100 GiB. */
  attachmentBytes: 100 * 1024 ** 3,
  /** Portal accounts in one organization of a client. */
  portalAccountsPerOrganization: 10_000,
} as const;

/**
 * Requests per second and burst of a client without its own limits (docs/security.md, "Throttling and
 * quotas"): the deployed default usage plan's throttle and the local gateway's default, so that a client
 * meets the same 429 locally as on AWS. Test suites and benchmarks raise it through their own settings.
 */
export const DEFAULT_CLIENT_THROTTLE = { rateLimit: 50, burstLimit: 100 } as const;

/**
 * Requests per UTC day of a client without its own daily quota: the default usage plan's, a client's
 * own plan's when `set-client-limits` was given no --quota-per-day, and the local gateway's default.
 */
export const DEFAULT_QUOTA_PER_DAY = 1_000_000;

const positiveWholeNumber = (name: string, fallback: number): number => {
  const raw = process.env[name];
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 1)
    throw new Error(`${name} must be a positive whole number, not ${raw}.`);
  return value;
};

/** The storage quotas of a client without its own: STORAGE_QUOTA_DEFAULTS, or the environment's. */
export const storageQuotaDefaults = () => ({
  attachmentBytes: positiveWholeNumber('ATTACHMENT_BYTES_PER_CLIENT', STORAGE_QUOTA_DEFAULTS.attachmentBytes),
  portalAccountsPerOrganization: positiveWholeNumber(
    'PORTAL_ACCOUNTS_PER_ORGANIZATION',
    STORAGE_QUOTA_DEFAULTS.portalAccountsPerOrganization,
  ),
});

/** A client's automation quotas unless it has its own (lib/rpa/automation-quotas.ts, docs/rpa.md). */
const AUTOMATION_QUOTA_DEFAULTS = { runsPerHour: 200, runsPerDay: 1000, runsInFlight: 50 } as const;

/** The automation quotas of a client without its own: AUTOMATION_RUNS_PER_HOUR, _PER_DAY, _IN_FLIGHT or the defaults. */
export const automationQuotaDefaults = () => ({
  runsPerHour: positiveWholeNumber('AUTOMATION_RUNS_PER_HOUR', AUTOMATION_QUOTA_DEFAULTS.runsPerHour),
  runsPerDay: positiveWholeNumber('AUTOMATION_RUNS_PER_DAY', AUTOMATION_QUOTA_DEFAULTS.runsPerDay),
  runsInFlight: positiveWholeNumber('AUTOMATION_RUNS_IN_FLIGHT', AUTOMATION_QUOTA_DEFAULTS.runsInFlight),
});

/**
 * How long API Gateway reuses an authorizer's answer for the same x-api-key value (the deployed
 * authorizer's resultsCacheTtl, and the local gateway's default): a revoked key keeps working that long.
 */
export const AUTHORIZER_CACHE_TTL_SECONDS = 60;

/**
 * Where webhooks may be sent (lib/webhooks/target-address.ts, docs/webhooks.md "No SSRF"): https and
 * public addresses only, unless WEBHOOK_URL_POLICY=local (set by the local stack alone), which also
 * allows http and loopback. Anything else is a configuration error, never a looser policy.
 */
export const webhookUrlPolicy = (): 'public-https' | 'local' => {
  const value = process.env.WEBHOOK_URL_POLICY;
  if (value === undefined || value === '' || value === 'public-https') return 'public-https';
  if (value === 'local') return 'local';
  throw new Error(`WEBHOOK_URL_POLICY must be public-https or local, not ${value}.`);
};

/**
 * Scheduled re-checks (lib/rechecks/recheck-policy.ts, docs/rechecks.md): the first back-off step for a
 * client without its own, RECHECK_EVERY_SECONDS (3600 by default). Locally the same value is the
 * re-check timer's period, so a demo with RECHECK_EVERY_SECONDS=5 sees a re-check within seconds.
 */
const RECHECK_EVERY_SECONDS_DEFAULT = 3600;
export const recheckEverySeconds = () => positiveWholeNumber('RECHECK_EVERY_SECONDS', RECHECK_EVERY_SECONDS_DEFAULT);
