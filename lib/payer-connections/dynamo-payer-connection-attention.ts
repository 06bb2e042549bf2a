import { retryOnConflict } from '#lib/concurrency';
import type { PayerConnectionAttentionReason } from '#lib/entities/payer-connection';
import { log } from '#lib/observability/logger';
import { getConnection, putConnection } from './dynamo-payer-connection-items.ts';
import type { AttentionOptions } from './payer-connection-store.ts';

/** A client's write between the read and the mark: read again, a few times. */
const MAX_ATTEMPTS = 3;

/**
 * The automation's mark (PayerConnectionStore.markAttention): read, then put status `attention` (which
 * moves the connection out of gsi2's active partition, so the channel choice no longer finds it)
 * conditional on the version read. Nothing is written for a connection that is gone, disabled, already
 * marked for the same reason, or (with `payerClientId`) about another client_id than the refused one.
 */
export const markAttention = (
  clientId: string,
  externalId: string,
  reason: PayerConnectionAttentionReason,
  { payerClientId, at = new Date().toISOString() }: AttentionOptions = {},
): Promise<boolean> =>
  retryOnConflict(
    async () => {
      const current = await getConnection(clientId, externalId);
      if (!current || current.status === 'disabled') return false;
      if (payerClientId !== undefined && current.payerClientId !== payerClientId) return false;
      if (current.status === 'attention' && current.statusReason === reason) return true;
      await putConnection(
        { ...current, status: 'attention', statusReason: reason, version: current.version + 1, updatedAt: at },
        current.version,
      );
      log.info('Payer connection needs attention', {
        clientId,
        organizationId: current.organizationId,
        payerConnectionId: externalId,
        payerId: current.payerId,
        reason,
      });
      return true;
    },
    { attempts: MAX_ATTEMPTS },
  );
