import { runStarts } from '#lib/runs/run-start-service';
import { dynamoPayerSubscriptionStore } from './dynamo-payer-subscription-store.ts';
import { dynamoSubmittedClaimStore } from './dynamo-submitted-claim-store.ts';
import { type ReceivedNotificationInput, receiveNotification } from './notification-receipt.ts';

/**
 * Payers' notifications on DynamoDB, starting their `$inquire` batches through the automation's own service
 * (the same checks, quotas and state machine as a client's batch, as the re-checks do), built once per cold
 * start. A batch is partial: a request that cannot start is refused alone, never the batch.
 */
export const payerNotifications = {
  receive: (input: ReceivedNotificationInput) =>
    receiveNotification(
      {
        subscriptions: dynamoPayerSubscriptionStore,
        claims: dynamoSubmittedClaimStore,
        now: () => new Date(),
        startBatch: async ({ clientId, organizationId, clientUserId, payerConnectionId, requestExternalIds }) => {
          const { batch, refused } = await runStarts.startCheckAuthStatus(
            { clientId, organizationId },
            { clientUserId, requestExternalIds, through: { channel: 'pas', payerConnectionId }, partial: true },
          );
          return { batchId: batch.batchId, refused };
        },
      },
      input,
    ),
};
