import { payerRecheckEverySeconds, recheckEverySeconds } from '#lib/config/settings';
import type { TenantStore } from '#lib/tenancy/tenant-store';
import type { RecheckSettings } from './recheck-policy.ts';

/**
 * A client's re-check settings (the admin CLI's `set-rechecks`): its own, or on with
 * RECHECK_EVERY_SECONDS as the first interval. Through a payer's API the first interval is
 * PAYER_RECHECK_EVERY_SECONDS, or the client's own when that is shorter. A client that is gone has none to run.
 */
export const recheckSettingsOf =
  (
    tenants: Pick<TenantStore, 'getClient'>,
    defaultSeconds = recheckEverySeconds,
    payerDefaultSeconds = payerRecheckEverySeconds,
  ) =>
  async (clientId: string): Promise<RecheckSettings> => {
    const client = await tenants.getClient(clientId);
    const firstIntervalSeconds = client?.recheckIntervalSeconds ?? defaultSeconds();
    return {
      enabled: client !== undefined && client.deletedAt === undefined && client.rechecks !== 'off',
      firstIntervalSeconds,
      payerFirstIntervalSeconds: Math.min(firstIntervalSeconds, payerDefaultSeconds()),
    };
  };

export type RecheckSettingsOf = ReturnType<typeof recheckSettingsOf>;
