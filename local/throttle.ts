import { DEFAULT_CLIENT_THROTTLE, DEFAULT_QUOTA_PER_DAY } from '#lib/config/defaults';
import type { Env } from '#lib/config/environment';
import type { TenantStore } from '#lib/tenancy/tenant-store';

/**
 * Per-client throttling for the local gateway: a token bucket per clientId, as API Gateway's usage
 * plans keep one per API key. Each client's bucket holds up to `burstLimit` requests and refills at
 * `rateLimit` per second; a request that finds it empty is refused with the seconds until a token
 * is back. A daily quota (`quotaPerDay`) bounds the requests a bucket admits per UTC day. A client's
 * own limits, stored on its Client item by the admin CLI, take precedence over the defaults.
 */
export interface ClientLimits {
  rateLimit: number;
  burstLimit: number;
  /** Requests per UTC day, as a usage plan's DAY quota. */
  quotaPerDay: number;
}

/**
 * Limits of a client without its own: the deployed default usage plan's (lib/config/defaults.ts), so that
 * `npm start` throttles a client as AWS does. LOCAL_RATE_LIMIT, LOCAL_BURST_LIMIT and
 * LOCAL_QUOTA_PER_DAY change them (read by local/config.ts); the test suite and the benchmarks raise them that way.
 */
export const DEFAULT_LOCAL_LIMITS: ClientLimits = { ...DEFAULT_CLIENT_THROTTLE, quotaPerDay: DEFAULT_QUOTA_PER_DAY };

const positive = (name: string, raw: string | undefined, fallback: number): number => {
  if (raw === undefined || raw.trim() === '') return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`${name} must be a positive number, not ${raw}.`);
  return value;
};

export const localLimitsFromEnv = (env: Env): ClientLimits => ({
  rateLimit: positive('LOCAL_RATE_LIMIT', env.LOCAL_RATE_LIMIT, DEFAULT_LOCAL_LIMITS.rateLimit),
  burstLimit: positive('LOCAL_BURST_LIMIT', env.LOCAL_BURST_LIMIT, DEFAULT_LOCAL_LIMITS.burstLimit),
  quotaPerDay: positive('LOCAL_QUOTA_PER_DAY', env.LOCAL_QUOTA_PER_DAY, DEFAULT_LOCAL_LIMITS.quotaPerDay),
});

/** Admit, or the whole seconds to wait (Retry-After) before a token is back. */
export type Admission = { admitted: true } | { admitted: false; retryAfterSeconds: number };

interface Bucket {
  tokens: number;
  at: number;
}

export const tokenBuckets = (now: () => number = Date.now) => {
  const buckets = new Map<string, Bucket>();
  return {
    take(clientId: string, { rateLimit, burstLimit }: Pick<ClientLimits, 'rateLimit' | 'burstLimit'>): Admission {
      const time = now();
      const bucket = buckets.get(clientId) ?? { tokens: burstLimit, at: time };
      // Limits can change between requests (set-client-limits): a lowered burst caps what is saved up.
      bucket.tokens = Math.min(burstLimit, bucket.tokens + ((time - bucket.at) / 1000) * rateLimit);
      bucket.at = time;
      buckets.set(clientId, bucket);
      if (bucket.tokens >= 1) {
        bucket.tokens -= 1;
        return { admitted: true };
      }
      return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / rateLimit)) };
    },
  };
};

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Daily quotas: a count per client and UTC day, as a usage plan's quota with period DAY (offset 0).
 * A request past the quota is refused until the next UTC midnight, the wait in whole seconds.
 * Counts live in the gateway's memory: a restarted local stack starts the day afresh.
 */
export const dailyQuotas = (now: () => number = Date.now) => {
  const counts = new Map<string, { day: number; count: number }>();
  return {
    take(clientId: string, quotaPerDay: number): Admission {
      const time = now();
      const day = Math.floor(time / DAY_MS);
      const used = counts.get(clientId);
      const current = used?.day === day ? used : { day, count: 0 };
      counts.set(clientId, current);
      if (current.count < quotaPerDay) {
        current.count += 1;
        return { admitted: true };
      }
      return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil(((day + 1) * DAY_MS - time) / 1000)) };
    },
  };
};

/** How long the gateway reuses a client's limits: a change (set-client-limits) applies within a second. */
const LIMITS_CACHE_MS = 1000;

/**
 * A client's own limits from its Client item, reused for LIMITS_CACHE_MS so that a load run does not
 * double the table reads of every request.
 */
export const cachedClientLimits = (store: Pick<TenantStore, 'getClient'>, now: () => number = Date.now) => {
  const cache = new Map<string, { limits: Promise<Partial<ClientLimits>>; until: number }>();
  return (clientId: string): Promise<Partial<ClientLimits>> => {
    const cached = cache.get(clientId);
    if (cached && cached.until > now()) return cached.limits;
    const limits = store.getClient(clientId).then((client) => ({
      ...(client?.rateLimit !== undefined ? { rateLimit: client.rateLimit } : {}),
      ...(client?.burstLimit !== undefined ? { burstLimit: client.burstLimit } : {}),
      ...(client?.quotaPerDay !== undefined ? { quotaPerDay: client.quotaPerDay } : {}),
    }));
    // A failed read is not kept: the next request asks again.
    limits.catch(() => cache.delete(clientId));
    cache.set(clientId, { limits, until: now() + LIMITS_CACHE_MS });
    return limits;
  };
};
