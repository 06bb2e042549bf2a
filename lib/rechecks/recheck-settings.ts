import { recheckEverySeconds } from '#lib/config/settings';
import type { TenantStore } from '#lib/tenancy/tenant-store';
import type { RecheckSettings } from './recheck-policy.ts';

/**
 * A client's re-check settings (the admin CLI's `set-rechecks`): its own, or on with
 * RECHECK_EVERY_SECONDS as the first interval. A client that is gone has none to run.
 */
export const recheckSettingsOf =
  (tenants: Pick<TenantStore, 'getClient'>, defaultSeconds = recheckEverySeconds) =>
  async (clientId: string): Promise<RecheckSettings> => {
    const client = await tenants.getClient(clientId);
    return {
      enabled: client !== undefined && client.deletedAt === undefined && client.rechecks !== 'off',
      firstIntervalSeconds: client?.recheckIntervalSeconds ?? defaultSeconds(),
    };
  };

export type RecheckSettingsOf = ReturnType<typeof recheckSettingsOf>;
