import { describe, expect, it } from 'vitest';
import { cachedClientLimits, localLimitsFromEnv, tokenBuckets } from '#local/throttle';

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

  it('reads its defaults from the environment, and refuses nonsense', () => {
    expect(localLimitsFromEnv({})).toEqual({ rateLimit: 1000, burstLimit: 2000 });
    expect(localLimitsFromEnv({ LOCAL_RATE_LIMIT: '5', LOCAL_BURST_LIMIT: '10' })).toEqual({
      rateLimit: 5,
      burstLimit: 10,
    });
    expect(() => localLimitsFromEnv({ LOCAL_RATE_LIMIT: '0' })).toThrow(/LOCAL_RATE_LIMIT/);
    expect(() => localLimitsFromEnv({ LOCAL_BURST_LIMIT: 'lots' })).toThrow(/LOCAL_BURST_LIMIT/);
  });

  it("reuses a client's limits for a second", async () => {
    let now = 0;
    let reads = 0;
    const store = {
      getClient: async (clientId: string) => {
        reads += 1;
        return { clientId, name: 'x', createdAt: '', rateLimit: reads, burstLimit: 7 };
      },
    };
    const limitsOf = cachedClientLimits(store, () => now);
    expect(await limitsOf('a')).toEqual({ rateLimit: 1, burstLimit: 7 });
    now = 999;
    expect(await limitsOf('a')).toEqual({ rateLimit: 1, burstLimit: 7 });
    now = 1000;
    expect(await limitsOf('a')).toEqual({ rateLimit: 2, burstLimit: 7 });
  });
});
