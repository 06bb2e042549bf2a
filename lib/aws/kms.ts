import { KMSClient } from '@aws-sdk/client-kms';
import { traced } from '#lib/observability/tracer';

/** Module-scope KMS client (envelope encryption of portal-account secrets). */
export const kms = traced(new KMSClient({}));
