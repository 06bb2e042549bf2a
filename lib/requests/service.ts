import { dynamoRequestStore } from './dynamo-request-store.ts';
import { requestService } from './requests.ts';

/** The request service on DynamoDB, built once per cold start. */
export const requests = requestService(dynamoRequestStore);
