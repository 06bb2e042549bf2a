import { describe, expect, it } from 'vitest';
import { firstIntervalFor } from '#lib/rechecks/recheck-policy';
import { recheckSettingsOf } from '#lib/rechecks/recheck-settings';
import type { TenantStore } from '#lib/tenancy/tenant-store';

/** The first re-check step per channel (docs/rechecks.md): a payer API's is shorter, never longer than the client's own. */
const tenantsWith = (recheckIntervalSeconds?: number): Pick<TenantStore, 'getClient'> => ({
  getClient: async (clientId) =>
    ({ clientId, ...(recheckIntervalSeconds ? { recheckIntervalSeconds } : {}) }) as Awaited<
      ReturnType<TenantStore['getClient']>
    >,
});
const settingsWith = (clientSeconds?: number) =>
  recheckSettingsOf(
    tenantsWith(clientSeconds),
    () => 3600,
    () => 900,
  )('c1');

describe('the first re-check step by channel', () => {
  it('is the payer API’s 15 minutes through PAS, the portal’s hour otherwise and for a schedule without a channel', async () => {
    const settings = await settingsWith();
    expect(firstIntervalFor(settings, 'pas')).toBe(900);
    expect(firstIntervalFor(settings, 'portal')).toBe(3600);
    expect(firstIntervalFor(settings, undefined)).toBe(3600);
  });

  it('follows a client’s own step where it is shorter, and never lengthens the payer API’s', async () => {
    const quick = await settingsWith(600);
    expect([firstIntervalFor(quick, 'pas'), firstIntervalFor(quick, 'portal')]).toEqual([600, 600]);
    const slow = await settingsWith(7200);
    expect([firstIntervalFor(slow, 'pas'), firstIntervalFor(slow, 'portal')]).toEqual([900, 7200]);
  });
});
