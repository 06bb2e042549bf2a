import { KMSClient } from '@aws-sdk/client-kms';
import { traced } from '#lib/observability/tracer';
import { lazyClient } from './lazy-client.ts';

/** Module-scope, created on first use, KMS client (envelope encryption of portal-account secrets). */
export const kms = lazyClient(() => traced(new KMSClient({})));
