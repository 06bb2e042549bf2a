import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { runStarts } from '#lib/runs/run-start-service';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { dynamoDeadlineStore } from './dynamo-deadline-store.ts';
import { dynamoRecheckStore } from './dynamo-recheck-store.ts';
import { recheckSettingsOf } from './recheck-settings.ts';
import { rechecksDispatcher } from './rechecks.ts';

/**
 * The re-check dispatcher on DynamoDB, starting batches through the automation's own service (the
 * same checks, quotas and state machine as a client's call), built once per cold start. A group's batch
 * keeps the account or connection that read its requests and is partial: what cannot start is refused
 * per request, never the group.
 */
export const rechecks = rechecksDispatcher({
  store: dynamoRecheckStore,
  deadlines: dynamoDeadlineStore,
  requests: dynamoRequestStore,
  settingsOf: recheckSettingsOf(dynamoTenantStore),
  startBatch: async ({ clientId, organizationId, clientUserId, through, requestExternalIds }) => {
    const { batch, refused } = await runStarts.startCheckAuthStatus(
      { clientId, organizationId },
      { clientUserId, requestExternalIds, through, partial: true },
    );
    return { batchId: batch.batchId, refused };
  },
});
