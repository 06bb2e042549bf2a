import { describe, expect, it } from 'vitest';
import { DEFAULT_CLIENT_THROTTLE, DEFAULT_QUOTA_PER_DAY } from '#lib/config/defaults';
import { cachedClientLimits, dailyQuotas, localLimitsFromEnv, tokenBuckets } from '#local/throttle';

describe('local gateway token buckets', () => {
  it('admits a burst, then one request per 1/rate seconds, with the wait in whole seconds', () => {
    let now = 0;
    const buckets = tokenBuckets(() => now);
    const limits = { rateLimit: 2, burstLimit: 3 };
    expect([1, 2, 3].map(() => buckets.take('a', limits).admitted)).toEqual([true, true, true]);
    expect(buckets.take('a', limits)).toEqual({ admitted: false, retryAfterSeconds: 1 });
    now = 499;
    expect(buckets.take('a', limits).admitted).toBe(false);
    now = 500;
    expect(buckets.take('a', limits).admitted).toBe(true);
    // Another client has its own bucket.
    expect(buckets.take('b', limits).admitted).toBe(true);
    // Idle time refills no further than the burst.
    now = 60_000;
    expect([1, 2, 3, 4].map(() => buckets.take('a', limits).admitted)).toEqual([true, true, true, false]);
  });

  it('rounds a long wait up to whole seconds', () => {
    const buckets = tokenBuckets(() => 0);
    const slow = { rateLimit: 0.25, burstLimit: 1 };
    buckets.take('a', slow);
    expect(buckets.take('a', slow)).toEqual({ admitted: false, retryAfterSeconds: 4 });
  });

  it("defaults to the deployed default usage plan's limits: 50 per second, burst 100, 1,000,000 a day", () => {
    // The same constants the CDK stack gives the default usage plan (test/infra checks that side).
    expect(DEFAULT_CLIENT_THROTTLE).toEqual({ rateLimit: 50, burstLimit: 100 });
    expect(localLimitsFromEnv({})).toEqual({ ...DEFAULT_CLIENT_THROTTLE, quotaPerDay: DEFAULT_QUOTA_PER_DAY });
    expect(DEFAULT_QUOTA_PER_DAY).toBe(1_000_000);
  });

  it('reads its defaults from the environment, and refuses nonsense', () => {
    expect(localLimitsFromEnv({ LOCAL_RATE_LIMIT: '5', LOCAL_BURST_LIMIT: '10', LOCAL_QUOTA_PER_DAY: '20' })).toEqual({
      rateLimit: 5,
      burstLimit: 10,
      quotaPerDay: 20,
    });
    expect(() => localLimitsFromEnv({ LOCAL_QUOTA_PER_DAY: '-1' })).toThrow(/LOCAL_QUOTA_PER_DAY/);
    expect(() => localLimitsFromEnv({ LOCAL_RATE_LIMIT: '0' })).toThrow(/LOCAL_RATE_LIMIT/);
    expect(() => localLimitsFromEnv({ LOCAL_BURST_LIMIT: 'lots' })).toThrow(/LOCAL_BURST_LIMIT/);
  });

  it("reuses a client's limits for a second", async () => {
    let now = 0;
    let reads = 0;
    const store = {
      getClient: async (clientId: string) => {
        reads += 1;
        return { clientId, name: 'x', createdAt: '', rateLimit: reads, burstLimit: 7, quotaPerDay: 9 };
      },
    };
    const limitsOf = cachedClientLimits(store, () => now);
    expect(await limitsOf('a')).toEqual({ rateLimit: 1, burstLimit: 7, quotaPerDay: 9 });
    now = 999;
    expect(await limitsOf('a')).toEqual({ rateLimit: 1, burstLimit: 7, quotaPerDay: 9 });
    now = 1000;
    expect(await limitsOf('a')).toEqual({ rateLimit: 2, burstLimit: 7, quotaPerDay: 9 });
  });
});

describe('local gateway daily quotas (a usage plan quota with period DAY, in UTC)', () => {
  const at = (iso: string) => Date.parse(iso);

  it('admits the quota per UTC day, then refuses until midnight with the wait in whole seconds', () => {
    let now = at('2026-03-04T23:59:00.000Z');
    const quotas = dailyQuotas(() => now);
    expect([1, 2, 3].map(() => quotas.take('a', 3).admitted)).toEqual([true, true, true]);
    expect(quotas.take('a', 3)).toEqual({ admitted: false, retryAfterSeconds: 60 });
    now = at('2026-03-04T23:59:59.500Z');
    expect(quotas.take('a', 3)).toEqual({ admitted: false, retryAfterSeconds: 1 });
    // Another client has its own count.
    expect(quotas.take('b', 3).admitted).toBe(true);
    // A new UTC day starts from zero.
    now = at('2026-03-05T00:00:00.000Z');
    expect([1, 2, 3, 4].map(() => quotas.take('a', 3).admitted)).toEqual([true, true, true, false]);
    expect(quotas.take('a', 3)).toEqual({ admitted: false, retryAfterSeconds: 24 * 60 * 60 });
  });

  it('applies a raised quota at once, to the count of the day', () => {
    const quotas = dailyQuotas(() => at('2026-03-04T12:00:00.000Z'));
    expect([1, 2].map(() => quotas.take('a', 1).admitted)).toEqual([true, false]);
    expect(quotas.take('a', 2).admitted).toBe(true);
    expect(quotas.take('a', 2).admitted).toBe(false);
  });
});
