import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { traced } from '#lib/observability/tracer';

/*
 * One module per AWS service, each holding its module-scope client (created once per Lambda
 * container): a function bundles only the SDK clients it imports. Endpoints come from the SDK's own
 * AWS_ENDPOINT_URL_<SERVICE> variables (set by the local stack), so no code here knows "local".
 * Each client is traced in X-Ray where it is created (lib/observability/tracer.ts; off outside Lambda).
 */
/** The low-level client, for libraries that take one (idempotency records); our code uses `dynamo`. */
export const dynamoClient = traced(new DynamoDBClient({}));

export const dynamo = DynamoDBDocumentClient.from(dynamoClient, {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
});
