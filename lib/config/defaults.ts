/*
 * The product's defaults: constants, no environment. The CDK app and the local stack import them
 * too (the deployed usage plan, the local gateway), so that a client meets the same limits everywhere.
 */

/**
 * Storage quotas (docs/security.md, "Quotas"): what one client may keep, unless the admin CLI gave it
 * its own (`set-storage-quotas`). Generous on purpose: they stop a runaway integration, not normal use.
 */
export const STORAGE_QUOTA_DEFAULTS = {
  /** Sum of the declared sizes of a client's attachment records: 100 GiB. */
  attachmentBytes: 100 * 1024 ** 3,
  /** Portal accounts in one organization of a client. */
  portalAccountsPerOrganization: 10_000,
  /**
   * Payer connections in one organization of a client: one per payer API it is registered with, a few
   * hundred payers at most today; the bound stops a runaway integration.
   */
  payerConnectionsPerOrganization: 1_000,
} as const;

/** A client's automation quotas unless it has its own (lib/runs/automation-quotas.ts, docs/rpa.md). */
export const AUTOMATION_QUOTA_DEFAULTS = { runsPerHour: 200, runsPerDay: 1000, runsInFlight: 50 } as const;

/** The first re-check back-off step of a client without its own (lib/rechecks/recheck-policy.ts). */
export const RECHECK_EVERY_SECONDS_DEFAULT = 3600;

/**
 * The first re-check step of a request read through the payer's API: an `$inquire` costs no login and no
 * browser, so it comes sooner than a portal's (the schedule's 15-minute tick on AWS: docs/rechecks.md).
 */
export const PAYER_RECHECK_EVERY_SECONDS_DEFAULT = 900;

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

/**
 * How long API Gateway reuses an authorizer's answer for the same x-api-key value (the deployed
 * authorizer's resultsCacheTtl, and the local gateway's default): a revoked key keeps working that long.
 */
export const AUTHORIZER_CACHE_TTL_SECONDS = 60;

/** The subscription keeper's period (its EventBridge schedule on AWS, the local timer's default). */
export const PAYER_SUBSCRIPTIONS_EVERY_SECONDS_DEFAULT = 300;
