import { dynamoPayerConnectionStore } from '#lib/payer-connections/dynamo-payer-connection-store';
import { dynamoPayerEndpointStore } from '#lib/payer-endpoints/dynamo-payer-endpoint-store';
import { payerTokenIssuer } from './payer-tokens.ts';
import { accessTokenFor } from './smart/token-cache.ts';

/**
 * The payer token function's service on DynamoDB and the clients' signing keys (KMS on AWS, the local
 * keeper locally), built once per cold start: its token cache lives as long as the warm environment.
 */
export const payerTokens = payerTokenIssuer({
  connections: dynamoPayerConnectionStore,
  endpoints: dynamoPayerEndpointStore,
  accessTokenFor,
});
