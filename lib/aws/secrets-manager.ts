import { SecretsManagerClient } from '@aws-sdk/client-secrets-manager';
import { traced } from '#lib/observability/tracer';
import { lazyClient } from './lazy-client.ts';

/** Module-scope, created on first use, Secrets Manager client (the cursor signing key). */
export const secretsManager = lazyClient(() => traced(new SecretsManagerClient({})));
