import { dynamoAttachmentStore } from '#lib/attachments/dynamo-attachment-store';
import { s3ObjectStorage } from '#lib/attachments/s3-object-storage';
import { dynamoPayerConnectionStore } from '#lib/payer-connections/dynamo-payer-connection-store';
import { dynamoPayerEndpointStore } from '#lib/payer-endpoints/dynamo-payer-endpoint-store';
import { subscribeConnection } from '#lib/payer-subscriptions/subscription-creation';
import { dynamoSubscriptionContext } from '#lib/payer-subscriptions/subscription-service';
import { recheckSettingsOf } from '#lib/rechecks/recheck-settings';
import { dynamoRequestStore } from '#lib/requests/dynamo-request-store';
import { flightLandings } from '#lib/runs/automation-quotas';
import { dynamoAutomationUsage } from '#lib/runs/dynamo-automation-usage';
import { dynamoRunStore } from '#lib/runs/dynamo-run-store';
import { dynamoTenantStore } from '#lib/tenancy/dynamo-tenant-store';
import { checkPayerStatus } from './check-payer-status.ts';
import { requestPayerToken } from './lambda-token-source.ts';
import { postFhirOperation } from './pas-transport.ts';
import { attachmentsWithData } from './payer-attachments.ts';
import { payerGateway } from './payer-gateway.ts';
import { type Invocation, type PayerTaskDependencies, payerTaskContextOf } from './payer-task-context.ts';
import { submitPasClaim } from './submit-pas-claim.ts';

/**
 * The payer-API channel's task handlers on DynamoDB, S3 (the attachments they send) and the payer token
 * function, built once per cold start. No browser, no portal driver, no signing key: the token function
 * alone signs (docs/payer-api.md).
 */
const call = payerGateway({ token: requestPayerToken, post: postFhirOperation });
const subscriptions = dynamoSubscriptionContext(call);

const payerTaskDependencies: PayerTaskDependencies = {
  runs: dynamoRunStore,
  requests: dynamoRequestStore,
  connectionOf: (clientId, externalId) => dynamoPayerConnectionStore.get(clientId, externalId),
  markAttention: async (clientId, externalId) => {
    await dynamoPayerConnectionStore.markAttention(clientId, externalId, 'unauthorized_client');
  },
  endpointOf: (payerId) => dynamoPayerEndpointStore.get(payerId),
  attachmentsOf: attachmentsWithData(dynamoAttachmentStore, s3ObjectStorage),
  call,
  subscribe: (owner) => subscribeConnection(subscriptions, owner),
  // The client's settings alone: IAM lets these functions read no more of a client's own partition.
  recheckSettings: recheckSettingsOf({ getClient: dynamoTenantStore.getClientSettings }),
  flights: flightLandings(dynamoAutomationUsage),
};

const ctx = payerTaskContextOf(payerTaskDependencies);

export const payerTasks = {
  submit: (input: unknown) => submitPasClaim(ctx, input),
  check: (input: unknown, invocation?: Invocation) => checkPayerStatus(ctx, input, invocation),
};
