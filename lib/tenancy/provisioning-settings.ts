import type {
  AutomationQuotasRecord,
  ClientLimitsRecord,
  RecheckSettingsRecord,
  StorageQuotasRecord,
} from '#lib/entities/tenancy';
import { CLIENT_INTERVAL_BOUNDS, isClientInterval } from '#lib/rechecks/recheck-policy';
import type { TenantStore } from './tenant-store.ts';

/*
 * A client's own settings, set by an operator: limits, storage and automation quotas, re-checks. Each is
 * checked whole before it is written, with a message fit for an operator.
 */

/**
 * Bounds of a client's own limits: API Gateway's default account-level throttle (10,000 requests per
 * second, burst 5,000) caps what one client could get anyway; the quota bound is a typo guard.
 */
const CLIENT_LIMIT_BOUNDS = {
  rateLimit: { min: 1, max: 10_000 },
  burstLimit: { min: 1, max: 5_000 },
  quotaPerDay: { min: 1, max: 100_000_000 },
} as const;

/**
 * A client's limits, checked: whole numbers within CLIENT_LIMIT_BOUNDS, rate and burst together (one
 * alone would pair with a default that may not fit it). Throws a message fit for an operator.
 */
export const clientLimits = (limits: ClientLimitsRecord): ClientLimitsRecord => {
  if ((limits.rateLimit === undefined) !== (limits.burstLimit === undefined)) {
    throw new Error('A rate limit and a burst limit go together: give both.');
  }
  if (limits.quotaPerDay !== undefined && limits.rateLimit === undefined) {
    throw new Error('A daily quota needs a rate limit and a burst limit too.');
  }
  for (const field of ['rateLimit', 'burstLimit', 'quotaPerDay'] as const) {
    const value = limits[field];
    const { min, max } = CLIENT_LIMIT_BOUNDS[field];
    if (value !== undefined && !(Number.isInteger(value) && value >= min && value <= max)) {
      throw new Error(`${field} must be a whole number from ${min} to ${max}.`);
    }
  }
  return Object.fromEntries(Object.entries(limits).filter(([, value]) => value !== undefined));
};

/** Bounds of a client's own storage quotas: typo guards (a petabyte of attachments, a million accounts). */
const STORAGE_QUOTA_BOUNDS = {
  attachmentBytesQuota: { min: 1, max: 1_000_000_000_000_000 },
  portalAccountsQuota: { min: 1, max: 1_000_000 },
  payerConnectionsQuota: { min: 1, max: 1_000_000 },
} as const;

/** A client's storage quotas, checked: whole numbers within STORAGE_QUOTA_BOUNDS, any of them. */
const storageQuotas = (quotas: StorageQuotasRecord): StorageQuotasRecord => {
  for (const field of ['attachmentBytesQuota', 'portalAccountsQuota', 'payerConnectionsQuota'] as const) {
    const value = quotas[field];
    const { min, max } = STORAGE_QUOTA_BOUNDS[field];
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= min && value <= max)) {
      throw new Error(`${field} must be a whole number from ${min} to ${max}.`);
    }
  }
  return Object.fromEntries(Object.entries(quotas).filter(([, value]) => value !== undefined));
};

/** Bounds of a client's automation quotas (set-automation-quotas): 0 stops the client's automation. */
const AUTOMATION_QUOTA_MAX = 1_000_000;

/** The quotas given, checked: whole numbers from 0 to AUTOMATION_QUOTA_MAX; absent ones left out. */
const automationQuotas = (quotas: AutomationQuotasRecord): AutomationQuotasRecord => {
  for (const [field, value] of Object.entries(quotas)) {
    if (value !== undefined && !(Number.isSafeInteger(value) && value >= 0 && value <= AUTOMATION_QUOTA_MAX)) {
      throw new Error(`${field} must be a whole number from 0 to ${AUTOMATION_QUOTA_MAX}.`);
    }
  }
  return Object.fromEntries(Object.entries(quotas).filter(([, value]) => value !== undefined));
};

/** Replaces a client's own limits; without any, the client is back on the defaults. */
export async function setClientLimits(store: TenantStore, clientId: string, limits: ClientLimitsRecord) {
  const checked = clientLimits(limits);
  if (!(await store.setClientLimits(clientId, checked))) throw new Error(`Unknown client ${clientId}`);
  return { clientId, ...checked };
}

/**
 * Replaces a client's own storage quotas; a quota not given is back at its default. Lowering one
 * below what the client stores deletes nothing: only new uploads and accounts are refused.
 */
export async function setStorageQuotas(store: TenantStore, clientId: string, quotas: StorageQuotasRecord) {
  const checked = storageQuotas(quotas);
  if (!(await store.setStorageQuotas(clientId, checked))) throw new Error(`Unknown client ${clientId}`);
  return { clientId, ...checked };
}

/** Replaces a client's own automation quotas; a quota not given is back at its default. */
export async function setAutomationQuotas(store: TenantStore, clientId: string, quotas: AutomationQuotasRecord) {
  const checked = automationQuotas(quotas);
  if (!(await store.setAutomationQuotas(clientId, checked))) throw new Error(`Unknown client ${clientId}`);
  return { clientId, ...checked };
}

/**
 * Turns a client's scheduled re-checks off, or on with its own first interval (or the default when
 * none is given): docs/rechecks.md. Off pauses them; on again, the schedules kept meanwhile go on.
 */
export async function setRecheckSettings(store: TenantStore, clientId: string, settings: RecheckSettingsRecord) {
  const seconds = settings.recheckIntervalSeconds;
  if (settings.rechecks === 'off' && seconds !== undefined) throw new Error('Re-checks that are off take no interval.');
  if (seconds !== undefined && !isClientInterval(seconds)) {
    const { min, max } = CLIENT_INTERVAL_BOUNDS;
    throw new Error(`The re-check interval must be a whole number of seconds from ${min} to ${max}.`);
  }
  if (!(await store.setRecheckSettings(clientId, settings))) throw new Error(`Unknown client ${clientId}`);
  return {
    clientId,
    rechecks: settings.rechecks === 'off' ? 'off' : 'on',
    ...(seconds ? { recheckIntervalSeconds: seconds } : {}),
  };
}
