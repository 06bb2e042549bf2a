import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { KMSClient } from '@aws-sdk/client-kms';
import { S3Client } from '@aws-sdk/client-s3';
import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { SFNClient } from '@aws-sdk/client-sfn';
import { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/*
 * Module-scope clients, created once per Lambda container. Endpoints come from the SDK's own
 * AWS_ENDPOINT_URL_<SERVICE> variables (set by the local stack), so no code here knows "local".
 * S3_FORCE_PATH_STYLE is set where the S3 endpoint cannot serve virtual-hosted buckets.
 */
export const dynamo = DynamoDBDocumentClient.from(new DynamoDBClient({}), {
  marshallOptions: { removeUndefinedValues: true, convertClassInstanceToMap: false },
});

export const s3 = new S3Client({ forcePathStyle: process.env.S3_FORCE_PATH_STYLE === 'true' });

export const kms = new KMSClient({});

export const sfn = new SFNClient({});

export const secretsManager = new SecretsManagerClient({});
