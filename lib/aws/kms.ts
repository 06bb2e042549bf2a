import { KMSClient } from '@aws-sdk/client-kms';

/** Module-scope KMS client (envelope encryption of portal-account secrets). */
export const kms = new KMSClient({});
