import { cursorSigningKeys } from '#lib/crypto/key-sources';
import { authorizationHistoryService } from './authorization-history.ts';
import { dynamoAuthorizationHistoryStore } from './dynamo-authorization-history-store.ts';
import { dynamoRequestStore } from './dynamo-request-store.ts';

/** The authorization history on DynamoDB, with the configured cursor keys, built once per cold start. */
export const authorizationHistory = authorizationHistoryService({
  requests: dynamoRequestStore,
  history: dynamoAuthorizationHistoryStore,
  cursorKeys: cursorSigningKeys,
});
