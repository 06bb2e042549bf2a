import { publicApiBaseUrl } from '#lib/config/resources';
import { requestPayerToken } from '#lib/payer-api/lambda-token-source';
import { postFhirOperation } from '#lib/payer-api/pas-transport';
import { payerGateway } from '#lib/payer-api/payer-gateway';
import type { PayerCall, PayerCallResult } from '#lib/payer-api/payer-task-context';
import { dynamoPayerConnectionStore } from '#lib/payer-connections/dynamo-payer-connection-store';
import { dynamoPayerEndpointStore } from '#lib/payer-endpoints/dynamo-payer-endpoint-store';
import { dynamoPayerSubscriptionStore } from './dynamo-payer-subscription-store.ts';
import { subscriptionContextOf } from './subscription-context.ts';
import { keepDueSubscriptions } from './subscription-keeper.ts';

/**
 * The subscriptions' life on DynamoDB and the payer gateway (tokens from the payer token function): the
 * payer tasks make a connection's subscription with their own gateway; the keeper function with this one.
 */
export const dynamoSubscriptionContext = (call: (call: PayerCall) => Promise<PayerCallResult>) =>
  subscriptionContextOf({
    store: dynamoPayerSubscriptionStore,
    call,
    connectionOf: (clientId, externalId) => dynamoPayerConnectionStore.get(clientId, externalId),
    endpointOf: (payerId) => dynamoPayerEndpointStore.get(payerId),
    publicApiBaseUrl,
  });

let keeper: ReturnType<typeof dynamoSubscriptionContext> | undefined;

/** The keeper function's run; its gateway (and the tokens it keeps while warm) made on first use. */
export const keepPayerSubscriptions = () => {
  keeper ??= dynamoSubscriptionContext(payerGateway({ token: requestPayerToken, post: postFhirOperation }));
  return keepDueSubscriptions(keeper);
};
